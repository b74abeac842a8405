/* Keeps the workloads library non-empty until its readers land. */
typedef int cs_workloads_translation_unit_is_not_empty;
