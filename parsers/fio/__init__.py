"""fio: JSON, terse and normal text output, job options."""
