"""The Helm chart, offline: lint, render with the schema, Kubernetes schemas, and what schemas cannot see."""

from __future__ import annotations

import functools
import tomllib

import pytest
import yaml

from tests import helm_checks

pytestmark = pytest.mark.skipif(
    helm_checks.helm_binary() is None, reason="helm could not be installed (.ci/install-helm: linux-amd64 only)"
)


@functools.cache
def rendered(scenario: str) -> list[dict]:
    return helm_checks.render(helm_checks.CHART / "ci" / f"{scenario}-values.yaml")


def of_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


def toml_of(objects: list[dict]) -> dict:
    (config,) = [o for o in of_kind(objects, "ConfigMap") if "lakeplanner.toml" in o["data"]]
    return tomllib.loads(config["data"]["lakeplanner.toml"])


def api_env(objects: list[dict]) -> dict:
    (deployment,) = of_kind(objects, "Deployment")
    return {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}


def test_every_scenario_lints_renders_and_validates():
    report = helm_checks.check_chart()
    assert report["scenarios"] >= 3
    assert report["errors"] == []
    assert report["lint_ok"] and report["schema_errors"] == 0
    assert report["objects_validated"] >= 30


def test_embedded_is_one_pod_with_a_lake_volume_and_no_ray():
    objects = rendered("embedded")
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim", "ServiceAccount", "Pod"} <= kinds
    assert not kinds & helm_checks.RAY_KINDS
    (deployment,) = of_kind(objects, "Deployment")
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"]["type"] == "Recreate"
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["lake"]["persistentVolumeClaim"]["claimName"] == "lp-lakeplanner-lake"
    settings = toml_of(objects)
    assert settings["llm"]["backend"] == "local" and settings["execute"]["sql_engine"] == "duckdb"
    assert settings["lake"] == {}  # SQLite catalog, warehouse and Milvus Lite in the lake directory
    (sa,) = of_kind(objects, "ServiceAccount")
    assert sa["automountServiceAccountToken"] is False
    assert not of_kind(objects, "Role") and not of_kind(objects, "RoleBinding")


def test_api_probes_and_test_hook():
    objects = rendered("embedded")
    container = of_kind(objects, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["args"] == ["serve"]
    (hook,) = of_kind(objects, "Pod")
    assert hook["metadata"]["annotations"]["helm.sh/hook"] == "test"
    script = hook["spec"]["containers"][0]["args"][0]
    assert "/readyz" in script and "/v1/ask" in script
    compile(script, "helm-test", "exec")


def test_cluster_maps_every_endpoint():
    objects = rendered("cluster")
    settings = toml_of(objects)
    assert settings["lake"] == {
        "catalog_uri": "http://iceberg-rest.data.svc:8181",
        "warehouse": "s3://lakeplanner-lake/warehouse",
        "milvus_uri": "http://milvus.data.svc:19530",
    }
    execute = settings["execute"]
    assert execute["mode"] == "ray" and execute["sql_engine"] == "trino"
    assert (execute["trino_host"], execute["trino_port"], execute["trino_catalog"]) == (
        "trino.data.svc",
        8080,
        "iceberg",
    )
    assert execute["otlp_endpoint"] == "http://otel-collector.observability.svc:4318/v1/traces"
    assert settings["llm"]["backend"] == "openai"
    assert settings["llm"]["base_url"] == "http://lp-lakeplanner-llm-serve-svc.data.svc:8000/v1"
    env = api_env(objects)
    assert env["LAKEPLANNER_EXEC_RAY_ADDRESS"]["value"] == "ray://lp-lakeplanner-ray-head-svc.data.svc:10001"
    assert env["AWS_REGION"]["value"] == "eu-west-1"
    assert env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]["key"] == "auth_token"
    # an existing Secret: the chart renders none of its own and refers to that one
    assert env["LAKEPLANNER_SERVE_API_KEYS_JSON"]["valueFrom"]["secretKeyRef"]["name"] == "lakeplanner-secrets"
    assert "lakeplanner-secrets" not in {s["metadata"]["name"] for s in of_kind(objects, "Secret")}
    assert {"Ingress", "HorizontalPodAutoscaler", "PodDisruptionBudget"} <= {o["kind"] for o in objects}
    assert "replicas" not in of_kind(objects, "Deployment")[0]["spec"]  # the HPA owns it


def test_raycluster_groups_gpus_and_tolerations():
    (cluster,) = of_kind(rendered("cluster"), "RayCluster")
    assert cluster["apiVersion"] == "ray.io/v1"
    spec = cluster["spec"]
    assert spec["rayVersion"] == "2.60.0" and spec["enableInTreeAutoscaling"] is True
    assert spec["authOptions"] == {"mode": "token", "secretName": "lp-lakeplanner-ray-auth"}
    head = spec["headGroupSpec"]
    assert head["rayStartParams"]["num-cpus"] == "0"
    assert {p["containerPort"] for p in head["template"]["spec"]["containers"][0]["ports"]} == {6379, 8265, 10001}
    groups = {g["groupName"]: g for g in spec["workerGroupSpecs"]}
    assert set(groups) == {"cpu", "gpu"}
    assert (groups["cpu"]["minReplicas"], groups["cpu"]["maxReplicas"]) == (1, 8)
    gpu_pod = groups["gpu"]["template"]["spec"]
    resources = gpu_pod["containers"][0]["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == 1 and resources["requests"]["nvidia.com/gpu"] == 1
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in gpu_pod["tolerations"]
    assert gpu_pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    assert "nvidia.com/gpu" not in groups["cpu"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    for group in [head, *groups.values()]:
        pod = group["template"]["spec"]
        (container,) = pod["containers"]
        assert container["image"] == "ghcr.io/lakeplanner/lakeplanner:0.1.0"
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        assert mounts["lake"] == "/lake" and mounts["shm"] == "/dev/shm" and mounts["tmp"] == "/tmp"


def test_rayjobs_run_the_ray_jobs_scripts_on_the_shared_cluster():
    jobs = {j["metadata"]["name"]: j["spec"] for j in of_kind(rendered("cluster"), "RayJob")}
    assert set(jobs) == {"lp-lakeplanner-ingest", "lp-lakeplanner-eval"}
    assert (
        jobs["lp-lakeplanner-ingest"]["entrypoint"] == "python /app/ray_jobs/ingest_lake.py '/lake/raw' --lake '/lake'"
    )
    assert jobs["lp-lakeplanner-eval"]["entrypoint"].startswith(
        "python /app/ray_jobs/batch_ask.py '/lake/questions.jsonl'"
    )
    for spec in jobs.values():
        script = spec["entrypoint"].split()[1].removeprefix("/app/")
        assert (helm_checks.ROOT / script).is_file()
        assert spec["clusterSelector"] == {"ray.io/cluster": "lp-lakeplanner-ray"}
        assert "rayClusterSpec" not in spec and "shutdownAfterJobFinishes" not in spec
        assert spec["submissionMode"] == "K8sJobMode"
        submitter = spec["submitterPodTemplate"]["spec"]
        assert submitter["restartPolicy"] == "Never"
        assert submitter["containers"][0]["securityContext"]["runAsNonRoot"] is True


def test_rayjob_with_its_own_cluster():
    objects = helm_checks.render(
        helm_checks.CHART / "ci" / "embedded-values.yaml",
        sets=("batch.jobs[0].name=eval", "batch.jobs[0].script=batch_ask.py", "batch.jobs[0].args={q.jsonl}"),
    )
    (job,) = of_kind(objects, "RayJob")
    assert job["spec"]["shutdownAfterJobFinishes"] is True and job["spec"]["ttlSecondsAfterFinished"] == 3600
    assert job["spec"]["rayClusterSpec"]["authOptions"]["mode"] == "token"
    assert "lp-lakeplanner-ray-auth" in {s["metadata"]["name"] for s in of_kind(objects, "Secret")}
    assert helm_checks.container_errors(objects) == []


def test_rayservice_serves_vllm_on_gpus():
    (service,) = of_kind(rendered("cluster"), "RayService")
    serve = yaml.safe_load(service["spec"]["serveConfigV2"])
    (app,) = serve["applications"]
    assert app["import_path"] == "ray.serve.llm:build_openai_app"
    (llm,) = app["args"]["llm_configs"]
    assert llm["model_loading_config"]["model_id"] == "qwen2.5-coder-7b-instruct"
    assert llm["accelerator_type"] == "L4"
    assert llm["deployment_config"]["autoscaling_config"] == {"min_replicas": 1, "max_replicas": 4}
    cluster = service["spec"]["rayClusterConfig"]
    (gpu,) = cluster["workerGroupSpecs"]
    container = gpu["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert container["image"].startswith("rayproject/ray-llm:2.60.0")
    assert "nvidia.com/gpu" not in cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["limits"]


def test_external_openai_auth_policies_and_secrets():
    objects = rendered("external-openai")
    settings = toml_of(objects)
    assert settings["llm"] == {
        "backend": "openai",
        "base_url": "https://api.openai.com/v1",
        "model": "gpt-4o-mini",
        "max_tokens": 512,
        "timeout_s": 120,
    }
    assert settings["serve"]["jwt_issuer"] == "https://login.example.com/realms/data"
    assert settings["serve"]["policy"] == "/etc/lakeplanner/policy/policy.yaml"
    assert settings["execute"]["row_cap"] == 500
    policy_map = next(o for o in of_kind(objects, "ConfigMap") if "policy.yaml" in o["data"])
    policy = yaml.safe_load(policy_map["data"]["policy.yaml"])
    assert policy["roles"]["emea"]["row_filters"]["customers"] == "country = :claims.country"
    (secret,) = of_kind(objects, "Secret")
    data = secret["stringData"]
    assert data["llm-api-key"].startswith("sk-test") and "s3cr3t-pw" in data["catalog-uri"]
    assert [k["name"] for k in yaml.safe_load(data["api-keys-json"])] == ["alice", "bob"]
    for config_map in of_kind(objects, "ConfigMap"):
        text = yaml.safe_dump(config_map["data"])
        assert "s3cr3t-pw" not in text and "sk-test" not in text
    env = api_env(objects)
    assert env["LAKEPLANNER_LLM_API_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "lp-lakeplanner-secrets",
        "key": "llm-api-key",
        "optional": True,
    }
    hook = of_kind(objects, "Pod")[0]["spec"]["containers"][0]
    assert {e["name"]: e.get("value") for e in hook["env"]}["AUTH"] == "true"


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (("replicaCount=two",), "at '/replicaCount': got string, want integer"),
        (("colour=blue",), "additional properties 'colour' not allowed"),
        (("ray.headCount=1",), "additional properties 'headCount' not allowed"),
        (("llm.provider=bedrock",), "/llm/provider"),
        (("secrets.apiKeys[0].name=a", "secrets.apiKeys[0].sha256=xyz", "secrets.apiKeys[0].roles={r}"), "sha256"),
        (("batch.cluster=shared", "batch.jobs[0].name=a", "batch.jobs[0].script=batch_ask.py"), "ray.enabled=true"),
    ],
)
def test_wrong_values_fail_with_a_clear_message(sets, message):
    with pytest.raises(RuntimeError) as failure:
        helm_checks.render(sets=sets)
    assert message in str(failure.value)


def test_chart_app_version_follows_pyproject():
    chart = yaml.safe_load((helm_checks.CHART / "Chart.yaml").read_text())
    project = tomllib.loads((helm_checks.ROOT / "pyproject.toml").read_text())["project"]
    assert chart["apiVersion"] == "v2" and chart["appVersion"] == project["version"]
    assert "dependencies" not in chart
