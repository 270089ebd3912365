"""What analysts read from the warehouse: the HTML sizing report, the table documentation,
ad-hoc queries and the Parquet export. Plain modules: no Dagster import."""
