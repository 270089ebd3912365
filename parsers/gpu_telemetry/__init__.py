"""GPU telemetry: nvidia-smi query logs and amd-smi energy and identity outputs."""
