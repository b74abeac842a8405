/* Plug-ins that loading must refuse (tests/cli/test_cli_plugins.sh), one per
 * BAD_* macro, each built as a shared module by tests/meson.build. */
#include <clustersim/clustersim.h>

static CsPlacement *place(const CsPlacementProblem *pb, CsParams *params, void *user_data,
                          GError **error)
{
  (void)params;
  (void)user_data;
  (void)error;
  return cs_placement_new(pb->n_models);
}

#ifdef BAD_COLLIDE
static const CsPlacementPolicy named_usher = { .name = "usher", .place = place };
#endif
static const CsPlacementPolicy half_added = { .name = "half-added", .place = place };

#ifndef BAD_NO_ABI
#ifdef BAD_ABI
/* What a plug-in built against other headers reports. */
G_MODULE_EXPORT int cs_plugin_abi_version(void);
G_MODULE_EXPORT int cs_plugin_abi_version(void)
{
  return CS_PLUGIN_ABI_VERSION + 41;
}
#else
CS_PLUGIN_DEFINE_ABI_VERSION
#endif
#endif

#ifdef BAD_NO_INIT
/* Something of its own, so that the shared object is not empty. */
G_MODULE_EXPORT const CsPlacementPolicy *bad_policy(void);
G_MODULE_EXPORT const CsPlacementPolicy *bad_policy(void)
{
  return &half_added;
}
#else
G_MODULE_EXPORT gboolean cs_plugin_init(CsRegistry *registry, GError **error)
{
#if defined(BAD_INIT_FAILS)
  /* Adds one policy, then fails: the registry must be left as it was. */
  if (!cs_registry_add_placement(registry, &half_added, NULL, error))
    return FALSE;
  g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "no licence for this cluster");
  return FALSE;
#elif defined(BAD_COLLIDE)
  /* A built-in's name; the refusal is ignored and TRUE returned. */
  (void)error;
  cs_registry_add_placement(registry, &half_added, NULL, NULL);
  cs_registry_add_placement(registry, &named_usher, NULL, NULL);
  return TRUE;
#else
  return cs_registry_add_placement(registry, &half_added, NULL, error);
#endif
}
#endif
