variables {
  name        = "lp"
  environment = "prod"
  object_store = {
    region        = "eu-west-1"
    endpoint      = "s3.eu-west-1.amazonaws.com"
    bucket_suffix = "123456789012"
  }
}

run "cpu_only_by_default" {
  command = plan

  assert {
    condition     = keys(output.node_groups) == tolist(["cpu"])
    error_message = "Without gpu_node_group.enabled only the CPU group should exist."
  }

  assert {
    condition     = length(output.node_groups.cpu.taints) == 0
    error_message = "The CPU group must stay untainted: every pod without a toleration lands there."
  }

  assert {
    condition     = output.node_groups.cpu.labels["lakeplanner.io/pool"] == "cpu"
    error_message = "The CPU group must carry the pool label the charts select on."
  }

  assert {
    condition     = !output.enabled_charts.nvidia_device_plugin
    error_message = "No GPU group, no device plugin."
  }

  assert {
    condition     = !output.chart_values.lakeplanner.ray.gpuWorkers.enabled
    error_message = "Ray GPU workers need the GPU group."
  }
}

run "gpu_group_tainted_and_labelled" {
  command = plan

  variables {
    gpu_node_group = {
      enabled        = true
      instance_types = ["g6.2xlarge"]
      max_size       = 3
      gpus_per_node  = 1
    }
  }

  assert {
    condition     = sort(keys(output.node_groups)) == tolist(["cpu", "gpu"])
    error_message = "Both groups should exist."
  }

  assert {
    condition = output.node_groups.gpu.taints == tolist([{
      key    = "nvidia.com/gpu"
      value  = "present"
      effect = "NoSchedule"
    }])
    error_message = "The GPU group must be tainted nvidia.com/gpu=present:NoSchedule."
  }

  assert {
    condition     = output.node_groups.gpu.gpu && output.node_groups.gpu.labels["nvidia.com/gpu.present"] == "true" && output.node_groups.gpu.labels["lakeplanner.io/pool"] == "gpu"
    error_message = "The GPU group must be labelled for node selectors."
  }

  assert {
    condition     = output.node_groups.gpu.name == "lp-prod-gpu" && output.node_groups.cpu.name == "lp-prod-cpu"
    error_message = "Node group names are NAME-ENV-POOL."
  }

  assert {
    condition     = output.enabled_charts.nvidia_device_plugin
    error_message = "A GPU group needs the NVIDIA device plugin."
  }

  assert {
    condition     = contains(output.chart_values.nvidia_device_plugin.tolerations, { key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" })
    error_message = "The device plugin must tolerate the GPU taint."
  }

  assert {
    condition = (
      output.chart_values.lakeplanner.ray.gpuWorkers.enabled &&
      output.chart_values.lakeplanner.ray.gpuWorkers.maxReplicas == 2 &&
      output.chart_values.lakeplanner.ray.gpuWorkers.tolerations == output.gpu_toleration &&
      output.chart_values.lakeplanner.ray.gpuWorkers.nodeSelector["lakeplanner.io/pool"] == "gpu"
    )
    error_message = "Ray GPU workers must select the GPU pool and tolerate its taint."
  }
}

run "rayservice_llm_on_gpus" {
  command = plan

  variables {
    gpu_node_group = { enabled = true }
    llm            = { provider = "rayService", model = "qwen2.5-coder-1.5b-instruct" }
  }

  assert {
    condition     = output.chart_values.lakeplanner.llm.rayService.gpuWorkers.tolerations == output.gpu_toleration
    error_message = "vLLM GPU workers must tolerate the GPU taint."
  }

  assert {
    condition     = output.enabled_charts.kuberay_operator
    error_message = "A RayService needs the KubeRay operator."
  }
}
