"""The Kubernetes deployment files (deploy/), checked offline: the Helm values against the
keys Dagster's chart accepts, the Dockerfile against the project it copies and the commands
it names, the Secret against the settings the project reads."""

from __future__ import annotations

import importlib
import json
import re
import shlex
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml

from runtime.config import WAREHOUSE_ENV
from store.lake import DATA_PATH_ENV

PROJECT = Path(__file__).resolve().parents[1]
DEPLOY = PROJECT / "deploy"
# Keys of the chart `dagster` 1.13 accepts where this project sets values, from its
# helm/dagster/values.schema.json (dagster-io/dagster, commit bdb8547f): for each section,
# the keys its schema lists ("additionalProperties": false in every section marked strict)
CHART_KEYS: dict[str, set[str]] = {
    "": {"dagsterWebserver", "dagster-user-deployments", "postgresql",
         "generatePostgresqlPasswordSecret", "generateCeleryConfigSecret", "rabbitmq",
         "redis", "flower", "ingress", "imagePullSecrets", "computeLogManager", "scheduler",
         "runLauncher", "pythonLogs", "dagsterDaemon", "busybox", "migrate", "telemetry",
         "serviceAccount", "global", "retention", "additionalInstanceConfig"},
    "global": {"postgresqlSecretName", "dagsterHome", "serviceAccountName",
               "celeryConfigSecretName"},
    "postgresql": {"image", "enabled", "postgresqlHost", "postgresqlUsername",
                   "postgresqlPassword", "postgresqlDatabase", "postgresqlParams",
                   "postgresqlScheme", "service"},
    "postgresql.service": {"port"},
    "dagster-user-deployments": {"enabled", "enableSubchart", "imagePullSecrets",
                                 "deployments"},
    "deployment": {"name", "image", "dagsterApiGrpcArgs", "codeServerArgs",
                   "includeConfigInLaunchedRuns", "deploymentNamespace", "port", "env",
                   "envConfigMaps", "envSecrets", "annotations", "nodeSelector", "affinity",
                   "tolerations", "podSecurityContext", "securityContext", "resources",
                   "livenessProbe", "readinessProbe", "startupProbe", "labels",
                   "volumeMounts", "volumes", "schedulerName", "initContainers",
                   "sidecarContainers"},
    "image": {"repository", "tag", "pullPolicy"},
    "dagsterWebserver": {"replicaCount", "image", "nameOverride", "pathPrefix", "service",
                         "workspace", "env", "envConfigMaps", "envSecrets",
                         "deploymentLabels", "labels", "nodeSelector", "affinity",
                         "tolerations", "podSecurityContext", "securityContext", "resources",
                         "readinessProbe", "livenessProbe", "startupProbe", "annotations",
                         "enableReadOnly", "dbStatementTimeout", "dbPoolRecycle", "logLevel",
                         "schedulerName", "volumeMounts", "volumes", "initContainerResources"},
    "dagsterDaemon": {"enabled", "image", "runCoordinator", "heartbeatTolerance", "env",
                      "envConfigMaps", "envSecrets", "deploymentLabels", "labels",
                      "nodeSelector", "affinity", "tolerations", "podSecurityContext",
                      "securityContext", "resources", "livenessProbe", "readinessProbe",
                      "startupProbe", "annotations", "runMonitoring", "runRetries", "sensors",
                      "schedules", "schedulerName", "volumeMounts", "volumes",
                      "initContainerResources"},
    "runCoordinator": {"enabled", "type", "config"},
    "runCoordinator.config": {"queuedRunCoordinator", "customRunCoordinator"},
    "queuedRunCoordinator": {"maxConcurrentRuns", "tagConcurrencyLimits",
                             "dequeueIntervalSeconds", "dequeueNumWorkers",
                             "dequeueUseThreads", "blockOpConcurrencyLimitedRuns"},
    "tagConcurrencyLimit": {"key", "value", "limit"},
    "runLauncher": {"type", "config"},
    "runLauncher.config": {"celeryK8sRunLauncher", "k8sRunLauncher", "customRunLauncher"},
    "k8sRunLauncher": {"image", "imagePullPolicy", "jobNamespace", "loadInclusterConfig",
                       "kubeconfigFile", "envConfigMaps", "envSecrets", "envVars",
                       "volumeMounts", "volumes", "labels", "failPodOnRunFailure",
                       "resources", "schedulerName", "securityContext", "runK8sConfig"},
    "runK8sConfig": {"containerConfig", "podSpecConfig", "podTemplateSpecMetadata",
                     "jobSpecConfig", "jobMetadata"},
    "telemetry": {"enabled"},
}
PULL_POLICIES = {"Always", "IfNotPresent", "Never"}


def _unknown(section: str, value: dict[str, Any]) -> set[str]:
    return set(value) - CHART_KEYS[section]


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "helm-values.yaml").read_text())


@pytest.fixture(scope="module")
def secret() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "secret.example.yaml").read_text())


def _deployment(values: dict[str, Any]) -> dict[str, Any]:
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    return deployment


def test_every_key_of_the_values_is_one_the_chart_accepts(values):
    assert _unknown("", values) == set()
    for section in ("global", "postgresql", "dagster-user-deployments", "dagsterWebserver",
                    "dagsterDaemon", "runLauncher", "telemetry"):
        assert _unknown(section, values[section]) == set(), section
    assert _unknown("postgresql.service", values["postgresql"]["service"]) == set()
    deployment = _deployment(values)
    assert _unknown("deployment", deployment) == set()
    assert {"name", "image", "port"} <= set(deployment)  # the chart requires them
    assert _unknown("image", deployment["image"]) == set()
    assert deployment["image"]["pullPolicy"] in PULL_POLICIES
    coordinator = values["dagsterDaemon"]["runCoordinator"]
    assert _unknown("runCoordinator", coordinator) == set()
    assert _unknown("runCoordinator.config", coordinator["config"]) == set()
    queued = coordinator["config"]["queuedRunCoordinator"]
    assert _unknown("queuedRunCoordinator", queued) == set()
    for limit in queued["tagConcurrencyLimits"]:
        assert _unknown("tagConcurrencyLimit", limit) == set()
    launcher = values["runLauncher"]
    assert _unknown("runLauncher.config", launcher["config"]) == set()
    assert _unknown("k8sRunLauncher", launcher["config"]["k8sRunLauncher"]) == set()
    assert _unknown("runK8sConfig",
                    launcher["config"]["k8sRunLauncher"]["runK8sConfig"]) == set()


def test_the_daemon_queues_runs_and_kubernetes_jobs_run_them(values):
    coordinator = values["dagsterDaemon"]["runCoordinator"]
    # the chart's schema: this type requires its config under this key
    assert (coordinator["enabled"], coordinator["type"]) == (True, "QueuedRunCoordinator")
    assert coordinator["config"]["queuedRunCoordinator"]["maxConcurrentRuns"] == 8
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert "k8sRunLauncher" in values["runLauncher"]["config"]
    assert values["postgresql"]["enabled"] is False  # external: the lake's server
    assert values["generatePostgresqlPasswordSecret"] is False


def test_one_run_per_partition_in_the_chart_as_in_the_instance_file(values):
    instance = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())
    config = instance["run_coordinator"]["config"]
    assert instance["run_coordinator"]["class"] == "QueuedRunCoordinator"
    chart = values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"]
    assert chart["tagConcurrencyLimits"] == config["tag_concurrency_limits"] == [
        {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1}]


def test_the_code_location_loads_the_projects_definitions(values):
    deployment = _deployment(values)
    args = deployment["dagsterApiGrpcArgs"]
    module = importlib.import_module(args[args.index("-m") + 1])
    assert hasattr(module, args[args.index("-a") + 1])
    assert deployment["includeConfigInLaunchedRuns"]["enabled"] is True
    mount = {m["name"]: m["mountPath"] for m in deployment["volumeMounts"]}
    assert {e["name"]: e["value"] for e in deployment["env"]}["SIZING_RAW_DIR"] == mount["raw"]


def test_every_pod_reads_the_warehouse_settings_from_the_secret(values, secret):
    name = secret["metadata"]["name"]
    assert _deployment(values)["envSecrets"] == [{"name": name}]
    assert values["runLauncher"]["config"]["k8sRunLauncher"]["envSecrets"] == [{"name": name}]
    assert set(secret["stringData"]) == {WAREHOUSE_ENV, DATA_PATH_ENV, "AWS_ACCESS_KEY_ID",
                                         "AWS_SECRET_ACCESS_KEY", "AWS_REGION"}
    assert secret["stringData"][WAREHOUSE_ENV].startswith("ducklake:postgres:")


def _instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of each instruction, continuation lines joined."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def test_the_image_copies_every_installed_package_and_nothing_missing():
    steps = _instructions(DEPLOY / "Dockerfile")
    assert steps[0] == ("FROM", "python:3.11-slim")
    sources = [shlex.split(arguments)[0] for step, arguments in steps if step == "COPY"]
    for source in sources:
        assert (PROJECT / source).exists(), source
    with open(PROJECT / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)
    packages = [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
    assert sorted(s for s in sources if s != "pyproject.toml") == sorted(packages)
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert not [s for s in sources if any(s.rstrip("/") == i.rstrip("/") for i in ignored)]
    # the extra it installs exists, and brings the K8sRunLauncher's package
    (install,) = [a for s, a in steps if s == "RUN" and "pip install" in a]
    extra = re.search(r'pip install "\.\[(\w+)\]"', install)
    assert extra is not None
    assert project["project"]["optional-dependencies"][extra.group(1)] == ["dagster-k8s==0.29.27"]


def test_the_images_command_is_an_installed_console_script_over_a_real_module():
    (command,) = [json.loads(a) for s, a in _instructions(DEPLOY / "Dockerfile") if s == "CMD"]
    scripts = {e.name for e in metadata.entry_points(group="console_scripts")}
    assert command[0] in scripts and "sizing" in scripts
    module = importlib.import_module(command[command.index("-m") + 1])
    assert hasattr(module, command[command.index("-a") + 1])
    assert command[1:3] == ["api", "grpc"]  # what the chart runs in a code location's pod
