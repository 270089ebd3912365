"""Sample tf_cnn_benchmarks logs: a ResNet-50 scaling study on one system (1 to 8 GPUs in
one node, then 2 and 4 nodes with Horovod) and the same runs in a VM.

Throughput per GPU falls with scale as real clusters do (all-reduce costs more across
nodes); the VM loses a few percent. Each log follows FORMATS.md: header, step lines with
running mean, +/- and jitter, the framed total, TensorFlow's device lines on stderr.
"""

from __future__ import annotations

IMAGES_PER_SEC_PER_GPU = 2800.0  # ResNet-50, fp16, batch 256, one H100
# GPUs -> share of linear scaling kept
EFFICIENCY = {1: 1.0, 2: 0.985, 4: 0.97, 8: 0.95, 16: 0.92, 32: 0.9}
VM_FACTOR = 0.96
BATCH = 256
GPU_NAME = "NVIDIA H100 80GB HBM3"
RULE = "-" * 64


def images_per_sec(gpus: int, factor: float = 1.0) -> float:
    return round(IMAGES_PER_SEC_PER_GPU * gpus * EFFICIENCY[gpus] * factor, 2)


def _header(gpus: int, horovod: bool) -> list[str]:
    devices = [f"'horovod/gpu:{i}'" if horovod else f"'/gpu:{i}'" for i in range(gpus)]
    local = 1 if horovod else gpus
    return [
        "TensorFlow:  2.11", "Model:       resnet50", "Dataset:     imagenet (synthetic)",
        "Mode:        training", "SingleSess:  False",
        f"Batch size:  {BATCH * (gpus if horovod else local)} global",
        f"             {BATCH} per device", "Num batches: 100", "Num epochs:  0.02",
        f"Devices:     [{', '.join(devices)}]", "NUMA bind:   False", "Data format: NCHW",
        "Optimizer:   sgd", f"Variables:   {'horovod' if horovod else 'replicated'}",
        *([] if horovod else ["AllReduce:   None"]), "==========",
    ]


def _device_lines(local_gpus: int) -> list[str]:
    return [
        f"2026-10-14 09:12:0{i % 10}.104211: I tensorflow/core/common_runtime/gpu/"
        f"gpu_device.cc:1613] Created device /job:localhost/replica:0/task:0/device:GPU:{i} "
        f"with 79078 MB memory:  -> device: {i}, name: {GPU_NAME}, pci bus id: "
        f"0000:{0x18 + i:02x}:00.0, compute capability: 9.0"
        for i in range(local_gpus)
    ]


def _steps(process_rate: float, drift: float) -> list[str]:
    """Step 1 and every 10th: the running mean, its uncertainty and jitter, the loss."""
    lines = ["Step\tImg/sec\ttotal_loss"]
    for step in (1, *range(10, 101, 10)):
        mean = process_rate * (1.0 - drift * step / 100.0)
        unc, jitter = (0.0, 0.0) if step == 1 else (round(mean * 0.0008, 1),
                                                     round(mean * 0.002, 1))
        loss = 7.9 - 0.0015 * step
        lines.append(f"{step}\timages/sec: {mean:.1f} +/- {unc:.1f} (jitter = {jitter:.1f})"
                     f"\t{loss:.3f}")
    return lines


def tf_cnn_log(gpus: int, factor: float = 1.0, drift: float = 0.0) -> str:
    """One process's log: replicated on one node, or one Horovod rank."""
    horovod = gpus > 8
    total = images_per_sec(gpus, factor)
    process_rate = total / gpus if horovod else total
    body = [
        *_device_lines(min(gpus, 8)), *_header(gpus, horovod),
        "Generating training model", "Initializing graph", "Running warm up", "Done warm up",
        *_steps(process_rate, drift), RULE, f"total images/sec: {total:.2f}", RULE,
    ]
    return "\n".join(body) + "\n"


def horovod_log(gpus: int, factor: float = 1.0) -> str:
    """mpirun --tag-output: every rank prints the whole log, each line tagged with its rank."""
    one = tf_cnn_log(gpus, factor).splitlines()
    return "".join(f"[1,{rank}]<stdout>:{line}\n" for rank in range(gpus) for line in one)


def training_files() -> dict[str, str]:
    root = "training/h100-pod-a"
    files = {
        f"{root}/run.yaml": ("system: h100-pod-a\ngpu_model: H100-80GB\ngpu_memory_gb: 80\n"
                             "gpus_per_node: 8\nvirtualization: bare-metal\nprecision: fp16\n"
                             "dataset: imagenet\nnetwork: 400G-IB\n"),
        f"{root}/1-node/run.yaml": "nodes: 1\n",
        f"{root}/2-nodes/run.yaml": "nodes: 2\n",
        f"{root}/4-nodes/run.yaml": "nodes: 4\n",
        f"{root}/2-nodes/resnet50-bs256-16gpu.log": horovod_log(16),
        f"{root}/4-nodes/resnet50-bs256-32gpu.log": horovod_log(32),
        "training/h100-vm-02/run.yaml": (
            "system: h100-vm-02\ngpu_model: H100-80GB\ngpus_per_node: 8\nnodes: 1\n"
            "virtualization: vm\nprecision: fp16\ndataset: imagenet\nhypervisor: kvm\n"),
    }
    for gpus in (1, 2, 4, 8):
        files[f"{root}/1-node/resnet50-bs256-{gpus}gpu.log"] = tf_cnn_log(gpus)
    for gpus in (1, 8):
        files[f"training/h100-vm-02/resnet50-bs256-{gpus}gpu.log"] = tf_cnn_log(gpus, VM_FACTOR)
    # a repeat of the 8-GPU run, a little slower: summarized, not double counted
    files[f"{root}/1-node/resnet50-bs256-8gpu-repeat.log"] = tf_cnn_log(8, 0.99)
    return files
