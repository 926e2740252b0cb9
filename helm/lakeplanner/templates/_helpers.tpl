{{/* Names and labels */}}
{{- define "lakeplanner.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "lakeplanner.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's name, kept short enough for KubeRay's generated Service names */}}
{{- define "lakeplanner.component" -}}
{{- printf "%s-%s" (include "lakeplanner.fullname" .root | trunc 40 | trimSuffix "-") .name -}}
{{- end -}}

{{- define "lakeplanner.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "lakeplanner.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "lakeplanner.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lakeplanner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "lakeplanner.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "lakeplanner.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "lakeplanner.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Secrets: the chart's own, or the one named by secrets.existingSecret (same keys) */}}
{{- define "lakeplanner.secretName" -}}
{{- default (printf "%s-secrets" (include "lakeplanner.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "lakeplanner.rayAuthSecretName" -}}
{{- default (include "lakeplanner.component" (dict "root" . "name" "ray-auth")) .Values.ray.auth.existingSecret -}}
{{- end -}}

{{- define "lakeplanner.rayClusterName" -}}
{{- include "lakeplanner.component" (dict "root" . "name" "ray") -}}
{{- end -}}

{{- define "lakeplanner.rayServiceName" -}}
{{- include "lakeplanner.component" (dict "root" . "name" "llm") -}}
{{- end -}}

{{/* Where the API reaches the LLM: the external endpoint, or the RayService's Serve Service */}}
{{- define "lakeplanner.llmBaseUrl" -}}
{{- if eq .Values.llm.provider "rayService" -}}
{{- printf "http://%s-serve-svc.%s.svc:8000/v1" (include "lakeplanner.rayServiceName" .) .Release.Namespace -}}
{{- else -}}
{{- .Values.llm.external.baseUrl -}}
{{- end -}}
{{- end -}}

{{- define "lakeplanner.llmModel" -}}
{{- if eq .Values.llm.provider "rayService" -}}{{ .Values.llm.rayService.modelId }}
{{- else if eq .Values.llm.provider "external" -}}{{ .Values.llm.external.model }}
{{- else -}}{{ .Values.llm.local.model }}{{- end -}}
{{- end -}}

{{/* The Ray address the API and Ray jobs use: Ray Client on the chart's RayCluster head */}}
{{- define "lakeplanner.rayAddress" -}}
{{- if .Values.ray.enabled -}}
{{- printf "ray://%s-head-svc.%s.svc:10001" (include "lakeplanner.rayClusterName" .) .Release.Namespace -}}
{{- else -}}
{{- .Values.execute.rayAddress -}}
{{- end -}}
{{- end -}}

{{/* Container securityContext of every container: non-root, no privilege escalation, no capabilities */}}
{{- define "lakeplanner.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.podSecurityContext.runAsUser }}
runAsGroup: {{ .Values.podSecurityContext.runAsGroup }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: {{ .Values.securityContext.readOnlyRootFilesystem }}
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "lakeplanner.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.podSecurityContext.runAsUser }}
runAsGroup: {{ .Values.podSecurityContext.runAsGroup }}
fsGroup: {{ .Values.podSecurityContext.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Settings that are not secret, as env (over the TOML file, same names) */}}
{{- define "lakeplanner.env" -}}
- name: LAKEPLANNER_CONFIG
  value: /etc/lakeplanner/config/lakeplanner.toml
- name: LAKEPLANNER_LAKE
  value: {{ .Values.lake.path | quote }}
- name: HOME
  value: /tmp
{{- if or .Values.ray.enabled .Values.execute.rayAddress }}
- name: LAKEPLANNER_EXEC_RAY_ADDRESS
  value: {{ include "lakeplanner.rayAddress" . | quote }}
{{- end }}
{{- if .Values.ray.enabled }}
{{ include "lakeplanner.rayAuthEnv" . }}
{{- end }}
{{- with .Values.objectStore }}
{{- if .region }}
- name: AWS_REGION
  value: {{ .region | quote }}
{{- end }}
{{- if .endpoint }}
- name: AWS_ENDPOINT_URL_S3
  value: {{ .endpoint | quote }}
{{- end }}
{{- end }}
{{- include "lakeplanner.secretEnv" . }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Secret values as env: each key is optional, so one Secret serves every scenario */}}
{{- define "lakeplanner.secretEnv" -}}
{{- $name := include "lakeplanner.secretName" . -}}
{{- range $env, $key := dict "LAKEPLANNER_SERVE_API_KEYS_JSON" "api-keys-json" "LAKEPLANNER_LLM_API_KEY" "llm-api-key" "LAKEPLANNER_LAKE_MILVUS_TOKEN" "milvus-token" "LAKEPLANNER_LAKE_CATALOG_URI" "catalog-uri" "AWS_ACCESS_KEY_ID" "aws-access-key-id" "AWS_SECRET_ACCESS_KEY" "aws-secret-access-key" "HF_TOKEN" "hf-token" }}
- name: {{ $env }}
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: {{ $key }}
      optional: true
{{- end }}
{{- end -}}

{{- define "lakeplanner.volumeMounts" -}}
- name: config
  mountPath: /etc/lakeplanner/config
  readOnly: true
- name: tmp
  mountPath: /tmp
- name: lake
  mountPath: {{ .Values.lake.path }}
{{- if .Values.policies.enabled }}
- name: policy
  mountPath: /etc/lakeplanner/policy
  readOnly: true
{{- end }}
{{- end -}}

{{- define "lakeplanner.volumes" -}}
- name: config
  configMap:
    name: {{ include "lakeplanner.fullname" . }}-config
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
- name: lake
{{- if .Values.lake.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-lake" (include "lakeplanner.fullname" .)) .Values.lake.persistence.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- if .Values.policies.enabled }}
- name: policy
  configMap:
    name: {{ default (printf "%s-policy" (include "lakeplanner.fullname" .)) .Values.policies.existingConfigMap }}
{{- end }}
{{- end -}}

{{/* One Ray node's pod template: the lakeplanner image, so tasks import lakeplanner as the API does */}}
{{- define "lakeplanner.rayPodTemplate" -}}
{{- $root := .root -}}
metadata:
  labels:
    {{- include "lakeplanner.selectorLabels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  serviceAccountName: {{ include "lakeplanner.serviceAccountName" $root }}
  automountServiceAccountToken: false
  securityContext:
    {{- include "lakeplanner.podSecurityContext" $root | nindent 4 }}
  {{- with .group.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .group.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.image.pullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ .container }}
      image: {{ default (include "lakeplanner.image" $root) .image }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      securityContext:
        {{- include "lakeplanner.containerSecurityContext" $root | nindent 8 }}
      resources:
        {{- include "lakeplanner.gpuResources" (dict "resources" .group.resources "gpus" .gpus) | nindent 8 }}
      {{- if .env }}
      env:
        {{- .env | nindent 8 }}
      {{- end }}
      {{- with .ports }}
      ports:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: shm
          mountPath: /dev/shm
        {{- if .lake }}
        {{- include "lakeplanner.volumeMounts" $root | nindent 8 }}
        {{- else }}
        - name: tmp
          mountPath: /tmp
        {{- end }}
  volumes:
    # Ray's object store lives in /dev/shm; the default 64Mi would spill everything to disk
    - name: shm
      emptyDir:
        medium: Memory
        sizeLimit: {{ .group.shmSize | default "2Gi" }}
    {{- if .lake }}
    {{- include "lakeplanner.volumes" $root | nindent 4 }}
    {{- else }}
    - name: tmp
      emptyDir: {}
    {{- end }}
{{- end -}}

{{/* The RayCluster spec shared by the RayCluster and the RayJobs that bring their own cluster */}}
{{- define "lakeplanner.rayClusterSpec" -}}
{{- $root := . -}}
{{- $ray := .Values.ray -}}
rayVersion: {{ $ray.rayVersion | quote }}
enableInTreeAutoscaling: {{ $ray.autoscaling }}
authOptions:
  mode: token
  secretName: {{ include "lakeplanner.rayAuthSecretName" . }}
headGroupSpec:
  serviceType: ClusterIP
  rayStartParams:
    {{- toYaml $ray.head.rayStartParams | nindent 4 }}
  template:
    {{- include "lakeplanner.rayPodTemplate" (dict "root" $root "group" $ray.head "container" "ray-head" "component" "ray-head" "lake" true "env" (include "lakeplanner.env" $root) "ports" (list (dict "name" "gcs" "containerPort" 6379) (dict "name" "dashboard" "containerPort" 8265) (dict "name" "client" "containerPort" 10001))) | nindent 4 }}
workerGroupSpecs:
  - groupName: cpu
    replicas: {{ $ray.cpuWorkers.replicas }}
    minReplicas: {{ $ray.cpuWorkers.minReplicas }}
    maxReplicas: {{ $ray.cpuWorkers.maxReplicas }}
    rayStartParams:
      {{- toYaml $ray.cpuWorkers.rayStartParams | nindent 6 }}
    template:
      {{- include "lakeplanner.rayPodTemplate" (dict "root" $root "group" $ray.cpuWorkers "container" "ray-worker" "component" "ray-worker-cpu" "lake" true "env" (include "lakeplanner.env" $root)) | nindent 6 }}
  {{- if $ray.gpuWorkers.enabled }}
  - groupName: gpu
    replicas: {{ $ray.gpuWorkers.replicas }}
    minReplicas: {{ $ray.gpuWorkers.minReplicas }}
    maxReplicas: {{ $ray.gpuWorkers.maxReplicas }}
    rayStartParams:
      {{- toYaml $ray.gpuWorkers.rayStartParams | nindent 6 }}
    template:
      {{- include "lakeplanner.rayPodTemplate" (dict "root" $root "group" $ray.gpuWorkers "container" "ray-worker" "component" "ray-worker-gpu" "gpus" $ray.gpuWorkers.gpusPerWorker "lake" true "env" (include "lakeplanner.env" $root)) | nindent 6 }}
  {{- end }}
{{- end -}}

{{/* lakeplanner.toml: the chart's settings, then `config` over them; values are TOML scalars or arrays */}}
{{- define "lakeplanner.toml" -}}
{{- $v := .Values -}}
{{- $llm := dict "max_tokens" $v.llm.maxTokens "timeout_s" $v.llm.timeoutS "model" (include "lakeplanner.llmModel" .) -}}
{{- if eq $v.llm.provider "local" -}}
{{- $_ := set $llm "backend" "local" -}}
{{- $_ := set $llm "context_tokens" $v.llm.local.contextTokens -}}
{{- if $v.llm.local.threads }}{{ $_ := set $llm "threads" $v.llm.local.threads }}{{ end -}}
{{- else -}}
{{- $_ := set $llm "backend" "openai" -}}
{{- $_ := set $llm "base_url" (include "lakeplanner.llmBaseUrl" .) -}}
{{- end -}}
{{- $execute := dict "mode" $v.execute.mode "sql_engine" $v.execute.sqlEngine "node_timeout_s" $v.execute.nodeTimeoutS -}}
{{- if eq $v.execute.sqlEngine "trino" -}}
{{- $_ := set $execute "trino_host" $v.trino.host -}}
{{- $_ := set $execute "trino_port" $v.trino.port -}}
{{- $_ := set $execute "trino_scheme" $v.trino.scheme -}}
{{- $_ := set $execute "trino_user" $v.trino.user -}}
{{- $_ := set $execute "trino_catalog" $v.trino.catalog -}}
{{- $_ := set $execute "trino_schema" $v.trino.schema -}}
{{- end -}}
{{- if $v.execute.otlpEndpoint }}{{ $_ := set $execute "otlp_endpoint" $v.execute.otlpEndpoint }}{{ end -}}
{{- $serve := dict "host" "0.0.0.0" "port" 8321 "queue" $v.serve.queue "retry_after_s" $v.serve.retryAfterS "max_question_chars" $v.serve.maxQuestionChars "roles_claim" $v.serve.jwt.rolesClaim -}}
{{- if $v.policies.enabled }}{{ $_ := set $serve "policy" "/etc/lakeplanner/policy/policy.yaml" }}{{ end -}}
{{- if $v.serve.anonymousRole }}{{ $_ := set $serve "anonymous_role" $v.serve.anonymousRole }}{{ end -}}
{{- if $v.serve.jwt.issuer }}{{ $_ := set $serve "jwt_issuer" $v.serve.jwt.issuer }}{{ end -}}
{{- if $v.serve.jwt.audience }}{{ $_ := set $serve "jwt_audience" $v.serve.jwt.audience }}{{ end -}}
{{- if $v.serve.jwt.jwksUrl }}{{ $_ := set $serve "jwks_url" $v.serve.jwt.jwksUrl }}{{ end -}}
{{- $lake := dict -}}
{{- if $v.iceberg.catalogUri }}{{ $_ := set $lake "catalog_uri" $v.iceberg.catalogUri }}{{ end -}}
{{- if $v.iceberg.warehouse }}{{ $_ := set $lake "warehouse" $v.iceberg.warehouse }}{{ end -}}
{{- if $v.milvus.uri }}{{ $_ := set $lake "milvus_uri" $v.milvus.uri }}{{ end -}}
{{- $tables := dict "llm" $llm "execute" $execute "serve" $serve "lake" $lake -}}
{{- range $name, $table := $tables }}
[{{ $name }}]
{{- range $key, $value := merge (deepCopy (get $v.config $name | default dict)) $table }}
{{ $key }} = {{ toJson $value }}
{{- end }}
{{ end -}}
{{- end -}}

{{/* resources with nvidia.com/gpu added to requests and limits when gpus is set */}}
{{- define "lakeplanner.gpuResources" -}}
{{- $r := deepCopy .resources -}}
{{- if .gpus -}}
{{- $_ := set $r "requests" (merge (dict "nvidia.com/gpu" .gpus) ($r.requests | default dict)) -}}
{{- $_ := set $r "limits" (merge (dict "nvidia.com/gpu" .gpus) ($r.limits | default dict)) -}}
{{- end -}}
{{- toYaml $r -}}
{{- end -}}

{{/* env of the vLLM (Ray Serve LLM) pods: caches under the writable /tmp, the optional Hugging Face token */}}
{{- define "lakeplanner.vllmEnv" -}}
- name: HOME
  value: /tmp
- name: HF_HOME
  value: /tmp/huggingface
- name: HF_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "lakeplanner.secretName" . }}
      key: hf-token
      optional: true
{{- end -}}

{{- define "lakeplanner.rayAuthEnv" -}}
- name: RAY_AUTH_MODE
  value: token
- name: RAY_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "lakeplanner.rayAuthSecretName" . }}
      key: auth_token
{{- end -}}

{{/* Whether anything Ray-based is rendered (and so the Ray auth Secret is needed) */}}
{{- define "lakeplanner.usesRay" -}}
{{- if or .Values.ray.enabled (eq .Values.llm.provider "rayService") .Values.batch.jobs -}}true{{- end -}}
{{- end -}}

{{/* Combinations the schema cannot express; fails `helm template` with the reason */}}
{{- define "lakeplanner.validate" -}}
{{- if and (eq .Values.batch.cluster "shared") .Values.batch.jobs (not .Values.ray.enabled) -}}
{{- fail "batch.cluster=shared submits the RayJobs to the chart's RayCluster: set ray.enabled=true, or batch.cluster=own" -}}
{{- end -}}
{{- if and .Values.ray.enabled (ne .Values.execute.mode "ray") .Values.ray.gpuWorkers.enabled (not .Values.batch.jobs) -}}
{{- fail "ray.gpuWorkers.enabled without execute.mode=ray or batch.jobs: nothing would use the GPU workers" -}}
{{- end -}}
{{- if and .Values.policies.enabled (not .Values.policies.existingConfigMap) (not .Values.policies.roles) -}}
{{- fail "policies.enabled needs policies.roles or policies.existingConfigMap" -}}
{{- end -}}
{{- end -}}
