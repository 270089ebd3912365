"""GuideLLM benchmark reports (guidellm/FORMATS.md): the JSON and YAML report of every era
(no metadata up to 0.4, `metadata.version` 1 in 0.5-0.6 and 2 from 0.7) and the CSV
export (one header row up to 0.3, three header rows from 0.4). The CSV readers rebuild the
report's dictionaries from the cells, so one reader (`report`) maps every shape to runs."""
