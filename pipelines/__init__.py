"""The composition root: Dagster definitions, jobs, sensors, schedules and the CLI."""
