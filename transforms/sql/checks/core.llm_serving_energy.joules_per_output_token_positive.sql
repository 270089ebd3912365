SELECT source_file, run_index, source, energy_j, output_tokens, joules_per_output_token
FROM core.llm_serving_energy
WHERE energy_j < 0 OR joules_per_output_token < 0
   OR (joules_per_output_token = 0 AND output_tokens > 0)
