"""What the two MLPerf suites (Inference, Training) share: the submission tree's path
conventions (`paths`) and the systems JSON (`systems`)."""
