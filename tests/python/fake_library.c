/* Libraries the Python package must refuse (tests/python/test_errors.py):
 * with FAKE_ABI, a libclustersim of another binary interface; without it,
 * one from before the interface had a version (it has cs_version only). */
const char *cs_version(void);
const char *cs_version(void)
{
  return "0.0.1";
}

#ifdef FAKE_ABI
int cs_abi_version(void);
int cs_abi_version(void)
{
  return FAKE_ABI;
}
#endif
