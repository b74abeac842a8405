/* A cmocka group fixture shared by the placement tests: the thesis' V100
 * profile set (data/profiles/v100_thesis.json, found through
 * CS_SOURCE_ROOT) as the group's state. */
#ifndef CS_TEST_THESIS_PROFILES_H
#define CS_TEST_THESIS_PROFILES_H

/* Loads the set into *state; -1 (the group fails) when it cannot be read. */
int thesis_profiles_setup(void **state);

/* Frees the set. */
int thesis_profiles_teardown(void **state);

#endif
