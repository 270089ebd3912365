"""Reference files people write: models, GPUs, datasets, checkpoint bytes, SLOs, scenarios."""
