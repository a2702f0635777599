{{/* Names, labels and the shared pieces of the gateway and worker pods. */}}

{{- define "iris.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of every resource name, at most 40 characters so the longest name the chart derives
(<fullname>-redis-url) stays short and the Redis StatefulSet name fits 52. A longer
fullnameOverride or <release>-<chart> keeps its first 33 characters plus "-" and 6 hex digits of
its sha256, so two long names never share resource names.
*/}}
{{- define "iris.fullname" -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- $full := ternary .Release.Name (printf "%s-%s" .Release.Name $name) (contains $name .Release.Name) -}}
{{- $full = .Values.fullnameOverride | default $full -}}
{{- if le (len $full) 40 -}}
{{- $full | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" ($full | trunc 33 | trimSuffix "-") ($full | sha256sum | trunc 6) -}}
{{- end -}}
{{- end -}}

{{- define "iris.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every resource; call with (dict "root" $ "component" "gateway"). */}}
{{- define "iris.labels" -}}
{{- $chart := dict "helm.sh/chart" (include "iris.chart" .root) "app.kubernetes.io/version" .root.Chart.AppVersion "app.kubernetes.io/managed-by" .root.Release.Service "app.kubernetes.io/part-of" "iris-cluster" -}}
{{- $selector := include "iris.selectorLabels" . | fromYaml -}}
{{- toYaml (merge $selector (deepCopy (.extra | default dict)) (deepCopy (.root.Values.commonLabels | default dict)) $chart) -}}
{{- end -}}

{{- define "iris.selectorLabels" -}}
app.kubernetes.io/name: {{ include "iris.name" .root | quote }}
app.kubernetes.io/instance: {{ .root.Release.Name | quote }}
app.kubernetes.io/component: {{ .component | quote }}
{{- end -}}

{{- define "iris.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{/* The ServiceAccount name of a component; call with (dict "root" $ "component" "gateway"). */}}
{{- define "iris.serviceAccountName" -}}
{{- $values := index .root.Values .component -}}
{{- if $values.serviceAccount.create -}}
{{- default (printf "%s-%s" (include "iris.fullname" .root) .component) $values.serviceAccount.name -}}
{{- else -}}
{{- default "default" $values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* "true" when the pods use a Redis of the user's: redis.external is enabled or given a URL
or a Secret. The in-chart Redis is then not installed, whatever redis.internal.enabled says. */}}
{{- define "iris.redisExternal" -}}
{{- $external := .Values.redis.external -}}
{{- if or $external.enabled $external.url $external.existingSecret -}}true{{- end -}}
{{- end -}}

{{/* "true" when the pods use a Redis Cluster of the user's: redis.cluster is enabled or given
seeds. IRIS_REDIS_URL is then built in the pod spec (no Secret of the chart holds it), and the
in-chart Redis is not installed. */}}
{{- define "iris.redisCluster" -}}
{{- $cluster := .Values.redis.cluster -}}
{{- if or $cluster.enabled $cluster.seeds -}}true{{- end -}}
{{- end -}}

{{/* "true" when the chart runs its own Redis. */}}
{{- define "iris.redisInternal" -}}
{{- if and .Values.redis.internal.enabled (not (include "iris.redisExternal" .)) (not (include "iris.redisCluster" .)) -}}true{{- end -}}
{{- end -}}

{{/* "true" when the chart writes the Secret <fullname>-redis-url: for the in-chart Redis, or for
redis.external.url. */}}
{{- define "iris.redisUrlSecretOwned" -}}
{{- if or (include "iris.redisInternal" .) (and (include "iris.redisExternal" .) (not .Values.redis.external.existingSecret)) -}}true{{- end -}}
{{- end -}}

{{/* IRIS_REDIS_URL of redis.cluster: the scheme (TLS or not), the user and $(IRIS_REDIS_PASSWORD)
when a password Secret is given (the kubelet puts the password in; it is never in the chart's
output), and the seeds. */}}
{{- define "iris.redisClusterUrl" -}}
{{- $cluster := .Values.redis.cluster -}}
{{- $auth := "" -}}
{{- if $cluster.password.existingSecret -}}
{{- $auth = printf "%s:$(IRIS_REDIS_PASSWORD)@" $cluster.username -}}
{{- end -}}
{{- printf "%s://%s%s" (ternary "rediss+cluster" "redis+cluster" (eq $cluster.tls true)) $auth (join "," $cluster.seeds) -}}
{{- end -}}

{{/* The Secret and key holding IRIS_REDIS_URL. */}}
{{- define "iris.redisUrlSecretName" -}}
{{- if and (include "iris.redisExternal" .) .Values.redis.external.existingSecret -}}
{{- .Values.redis.external.existingSecret -}}
{{- else -}}
{{- printf "%s-redis-url" (include "iris.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "iris.redisUrlSecretKey" -}}
{{- if and (include "iris.redisExternal" .) .Values.redis.external.existingSecret -}}
{{- .Values.redis.external.existingSecretKey -}}
{{- else -}}
{{- print "redis-url" -}}
{{- end -}}
{{- end -}}

{{- define "iris.redisHost" -}}
{{- printf "%s-redis.%s.svc" (include "iris.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/* IRIS_MEDIA_STORE as the pods see it ("" leaves the binaries' per-pod default). */}}
{{- define "iris.mediaStore" -}}
{{- if .Values.media.store -}}
{{- .Values.media.store -}}
{{- else if .Values.media.volume.enabled -}}
{{- printf "file://%s" .Values.media.volume.mountPath -}}
{{- end -}}
{{- end -}}

{{- define "iris.mediaClaimName" -}}
{{- default (printf "%s-media" (include "iris.fullname" .)) .Values.media.volume.existingClaim -}}
{{- end -}}

{{/* Settings both components share, as ConfigMap data lines. */}}
{{- define "iris.commonConfig" -}}
IRIS_PARTITIONS: {{ .Values.cluster.partitions | quote }}
RUST_LOG: {{ .Values.cluster.logLevel | quote }}
IRIS_LOG_FORMAT: {{ .Values.cluster.logFormat | quote }}
{{- with (include "iris.mediaStore" .) }}
IRIS_MEDIA_STORE: {{ . | quote }}
{{- end }}
{{- with .Values.media.s3 }}
{{- if .endpoint }}
AWS_ENDPOINT_URL: {{ .endpoint | quote }}
{{- end }}
{{- if .region }}
AWS_REGION: {{ .region | quote }}
{{- end }}
{{- if .allowHttp }}
AWS_ALLOW_HTTP: "true"
{{- end }}
{{- end }}
{{- with .Values.otel }}
{{- if .endpoint }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ .endpoint | quote }}
OTEL_EXPORTER_OTLP_PROTOCOL: {{ .protocol | quote }}
{{- if .sampler }}
OTEL_TRACES_SAMPLER: {{ .sampler | quote }}
{{- end }}
{{- if ne (toString .samplerArg) "" }}
OTEL_TRACES_SAMPLER_ARG: {{ .samplerArg | toString | quote }}
{{- end }}
{{- if not (kindIs "invalid" .metricExportInterval) }}
OTEL_METRIC_EXPORT_INTERVAL: {{ .metricExportInterval | int64 | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A component's own settings map as ConfigMap lines; null and "" are left out. */}}
{{- define "iris.configLines" -}}
{{- $lines := list -}}
{{- range $key, $value := . -}}
{{- if and (not (kindIs "invalid" $value)) (ne (toString $value) "") -}}
{{- $text := ternary ($value | int64 | toString) ($value | toString) (kindIs "float64" $value) -}}
{{- $lines = append $lines (printf "%s: %s" $key (quote $text)) -}}
{{- end -}}
{{- end -}}
{{- join "\n" $lines -}}
{{- end -}}

{{/*
Env of every gateway and worker container: downward API names, the Redis URL and the OTLP
headers from Secrets. Call with (dict "root" $ "component" "gateway").
*/}}
{{- define "iris.commonEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
- name: IRIS_NODE_ID
  value: $(POD_NAME)
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ include "iris.resourceAttributes" . | quote }}
{{- if include "iris.redisCluster" .root }}
{{- with .root.Values.redis.cluster.password }}
{{- if .existingSecret }}
- name: IRIS_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret }}
      key: {{ .key }}
{{- end }}
{{- end }}
- name: IRIS_REDIS_URL
  value: {{ include "iris.redisClusterUrl" .root | quote }}
{{- else }}
- name: IRIS_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "iris.redisUrlSecretName" .root }}
      key: {{ include "iris.redisUrlSecretKey" .root }}
{{- end }}
{{- with .root.Values.otel.headers }}
{{- if .existingSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret }}
      key: {{ .key }}
{{- end }}
{{- end }}
{{- with .root.Values.media.s3 }}
{{- if .existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret }}
      key: {{ .accessKeyIdKey }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret }}
      key: {{ .secretAccessKeyKey }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "iris.resourceAttributes" -}}
{{- $attributes := list "k8s.pod.name=$(POD_NAME)" "k8s.namespace.name=$(POD_NAMESPACE)" "k8s.node.name=$(NODE_NAME)" (printf "k8s.deployment.name=%s-%s" (include "iris.fullname" .root) .component) (printf "service.version=%s" .root.Chart.AppVersion) -}}
{{- range $key, $value := .root.Values.otel.resourceAttributes -}}
{{- $attributes = append $attributes (printf "%s=%v" $key $value) -}}
{{- end -}}
{{- join "," $attributes -}}
{{- end -}}

{{/* Pod annotations of a component: config checksum, Prometheus scrape hints, user ones. */}}
{{- define "iris.podAnnotations" -}}
{{- $own := dict "checksum/config" (include (print .root.Template.BasePath "/" .component "/configmap.yaml") .root | sha256sum) -}}
{{- if include "iris.redisUrlSecretOwned" .root }}
{{- $_ := set $own "checksum/redis-url" (include (print .root.Template.BasePath "/redis/url-secret.yaml") .root | sha256sum) -}}
{{- end }}
{{- $prom := dict -}}
{{- if .root.Values.metrics.podAnnotations }}
{{- $prom = dict "prometheus.io/scrape" "true" "prometheus.io/port" (toString .port) "prometheus.io/path" "/metrics" -}}
{{- end }}
{{- toYaml (merge $own (deepCopy ((index .root.Values .component).podAnnotations | default dict)) $prom) -}}
{{- end -}}

{{/* The gateway's port serving /metrics: the internal one, or the public one without it. */}}
{{- define "iris.gatewayMetricsPort" -}}
{{- if gt (int .Values.gateway.internalPort) 0 }}{{ .Values.gateway.internalPort }}{{ else }}{{ .Values.gateway.containerPort }}{{ end -}}
{{- end -}}

{{/* The name of that port on the pods and the Service. */}}
{{- define "iris.gatewayMetricsPortName" -}}
{{- if gt (int .Values.gateway.internalPort) 0 }}internal{{ else }}http{{ end -}}
{{- end -}}

{{/* A NetworkPolicy egress rule's `to`: the CIDRs given, or nothing (any address). */}}
{{- define "iris.egressTo" -}}
{{- with . -}}
to:
{{- range . }}
  - ipBlock:
      cidr: {{ . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* topologySpreadConstraints with the component's selector filled in where missing. */}}
{{- define "iris.topologySpread" -}}
{{- $selector := fromYaml (include "iris.selectorLabels" .) -}}
{{- $constraints := list -}}
{{- range (index .root.Values .component).topologySpreadConstraints -}}
{{- $constraint := deepCopy . -}}
{{- if not (hasKey $constraint "labelSelector") -}}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" $selector) -}}
{{- end -}}
{{- $constraints = append $constraints $constraint -}}
{{- end -}}
{{- with $constraints }}
topologySpreadConstraints:
{{ toYaml . | indent 2 }}
{{- end }}
{{- end -}}

{{/* Scheduling and pull settings shared by the pod specs of a component's values. */}}
{{- define "iris.podScheduling" -}}
{{- with .imagePullSecrets }}
imagePullSecrets:
{{ toYaml . | indent 2 }}
{{- end }}
{{- with .priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .nodeSelector }}
nodeSelector:
{{ toYaml . | indent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
{{ toYaml . | indent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
{{ toYaml . | indent 2 }}
{{- end }}
{{- end -}}

{{/* Milliseconds of a Prometheus duration such as 1m30s (the schema admits only that form). */}}
{{- define "iris.durationMs" -}}
{{- $units := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 -}}
{{- $total := 0 -}}
{{- range regexFindAll "[0-9]+(ms|s|m|h)" . -1 -}}
{{- $count := regexFind "^[0-9]+" . -}}
{{- $total = add $total (mul (int64 $count) (get $units (trimPrefix $count .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* Refuses value combinations that would install a broken cluster. */}}
{{- define "iris.validate" -}}
{{- $fullname := include "iris.fullname" . -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $fullname) -}}
{{- fail (printf "resource names would start with %q, which is not a DNS-1035 label (lower-case letters, digits and '-', starting with a letter), as Service names must be: set fullnameOverride, or use a release name that starts with a letter" $fullname) -}}
{{- end -}}
{{- if not (or (include "iris.redisExternal" .) (include "iris.redisCluster" .) .Values.redis.internal.enabled) -}}
{{- fail "redis: no Redis: enable redis.internal, give redis.external a url or existingSecret, or give redis.cluster seeds" -}}
{{- end -}}
{{- with .Values.redis.cluster -}}
{{- if and (include "iris.redisCluster" $) (include "iris.redisExternal" $) -}}
{{- fail "redis: redis.cluster and redis.external both name the Redis: use one (a redis+cluster:// URL in redis.external, or redis.cluster's seeds)" -}}
{{- end -}}
{{- if and (include "iris.redisCluster" $) (not .seeds) -}}
{{- fail "redis.cluster: give seeds (host:port of at least one node)" -}}
{{- end -}}
{{- if and .username (not .password.existingSecret) -}}
{{- fail "redis.cluster.username needs the password: set redis.cluster.password.existingSecret" -}}
{{- end -}}
{{- end -}}
{{- if and (include "iris.redisExternal" .) (not (or .Values.redis.external.url .Values.redis.external.existingSecret)) -}}
{{- fail "redis.external: set url or existingSecret" -}}
{{- end -}}
{{- with .Values.metrics.serviceMonitor -}}
{{- if and .enabled .scrapeTimeout (gt (include "iris.durationMs" .scrapeTimeout | int64) (include "iris.durationMs" .interval | int64)) -}}
{{- fail (printf "metrics.serviceMonitor.scrapeTimeout (%s) must not exceed interval (%s): Prometheus refuses such a scrape config" .scrapeTimeout .interval) -}}
{{- end -}}
{{- end -}}
{{- $gateway := .Values.gateway -}}
{{- if le (int $gateway.terminationGracePeriodSeconds) (add $gateway.preStopSleepSeconds $gateway.drainSeconds | int) -}}
{{- fail (printf "gateway.terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds (%d) + drainSeconds (%d)" (int $gateway.terminationGracePeriodSeconds) (int $gateway.preStopSleepSeconds) (int $gateway.drainSeconds)) -}}
{{- end -}}
{{- if eq (int $gateway.internalPort) (int $gateway.containerPort) -}}
{{- fail (printf "gateway.internalPort (%d) must differ from gateway.containerPort: the internal port keeps /metrics and /api/v1 off the public one (0 turns it off)" (int $gateway.internalPort)) -}}
{{- end -}}
{{- $worker := .Values.worker -}}
{{- $drainMs := include "iris.workerDrainGraceMs" . | int -}}
{{- if le $drainMs 0 -}}
{{- fail (printf "worker: terminationGracePeriodSeconds (%d) leaves no drain grace after drainMarginSeconds (%d)" (int $worker.terminationGracePeriodSeconds) (int $worker.drainMarginSeconds)) -}}
{{- end -}}
{{- if gt (add $drainMs (mul $worker.drainMarginSeconds 1000)) (mul $worker.terminationGracePeriodSeconds 1000) -}}
{{- fail (printf "worker.drainGraceMs (%d) + drainMarginSeconds (%d s) must fit in terminationGracePeriodSeconds (%d s)" $drainMs (int $worker.drainMarginSeconds) (int $worker.terminationGracePeriodSeconds)) -}}
{{- end -}}
{{- with .Values.gateway.autoscaling -}}
{{- if and .enabled (kindIs "invalid" .targetCPUUtilizationPercentage) (not .pairedDevices.enabled) -}}
{{- fail "gateway.autoscaling: the HPA needs a metric: set targetCPUUtilizationPercentage or enable pairedDevices" -}}
{{- end -}}
{{- if and .enabled (gt (int .minReplicas) (int .maxReplicas)) -}}
{{- fail (printf "gateway.autoscaling: minReplicas (%d) exceeds maxReplicas (%d)" (int .minReplicas) (int .maxReplicas)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.media.volume.enabled .Values.media.store (not (hasPrefix "file://" .Values.media.store)) -}}
{{- fail "media: media.volume is mounted but media.store is not a file:// URL; leave media.store empty to use the volume" -}}
{{- end -}}
{{- if hasPrefix "file://" .Values.media.store -}}
{{- $path := trimPrefix "file://" .Values.media.store -}}
{{- if .Values.media.volume.enabled -}}
{{- if not (include "iris.pathUnder" (dict "path" $path "mounts" (list (dict "mountPath" .Values.media.volume.mountPath)))) -}}
{{- fail (printf "media.store %s is not on the media volume, which is mounted at %s: leave media.store empty or point it at %s (or a directory below it)" .Values.media.store .Values.media.volume.mountPath .Values.media.volume.mountPath) -}}
{{- end -}}
{{- else if not (and (include "iris.pathUnder" (dict "path" $path "mounts" .Values.gateway.extraVolumeMounts "volumes" .Values.gateway.extraVolumes)) (include "iris.pathUnder" (dict "path" $path "mounts" .Values.worker.extraVolumeMounts "volumes" .Values.worker.extraVolumes))) -}}
{{- fail (printf "media.store %s is on no volume: the root filesystem is read-only and not shared; enable media.volume (mountPath %s) or mount one shared writable volume there through gateway.extraVolumeMounts and worker.extraVolumeMounts" .Values.media.store $path) -}}
{{- end -}}
{{- end -}}
{{- $secretHints := include "iris.secretEnvHints" . | fromYaml -}}
{{- range $component := list "gateway" "worker" -}}
{{- $seen := list -}}
{{- range (index $.Values $component).extraEnv -}}
{{- if and (hasKey $secretHints .name) (hasKey . "value") -}}
{{- fail (printf "%s.extraEnv gives %s as a plain value; secrets are only referenced: use %s, or valueFrom.secretKeyRef" $component .name (get $secretHints .name)) -}}
{{- end -}}
{{- if has .name $seen -}}
{{- fail (printf "%s.extraEnv sets %s twice" $component .name) -}}
{{- end -}}
{{- $seen = append $seen .name -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "true" when .path is a mountPath of .mounts or a directory below one, on a writable mount
that is not of an emptyDir in .volumes (a pod's own, not shared). */}}
{{- define "iris.pathUnder" -}}
{{- $path := .path | trimSuffix "/" -}}
{{- $podOwn := list -}}
{{- range .volumes | default list -}}
{{- if hasKey . "emptyDir" }}{{ $podOwn = append $podOwn .name }}{{ end -}}
{{- end -}}
{{- range .mounts -}}
{{- $mount := .mountPath | default "" | trimSuffix "/" -}}
{{- if and (not .readOnly) (not (has .name $podOwn)) (hasPrefix "/" $path) (or (eq $path $mount) (hasPrefix (printf "%s/" $mount) $path)) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* The env entries the chart itself gives a component's container. */}}
{{- define "iris.chartEnv" -}}
{{ include "iris.commonEnv" . }}
{{- $values := index .root.Values .component -}}
{{- $secrets := list -}}
{{- if eq .component "gateway" -}}
{{- $secrets = list (list "IRIS_ADMIN_KEY" $values.adminKey) -}}
{{- else -}}
{{- $secrets = list (list "IRIS_AGENT_API_KEY" $values.agentApiKey) (list "IRIS_NTFY_TOKEN" $values.push.ntfy.token) -}}
{{- end -}}
{{- range $secrets }}
{{- $secret := index . 1 }}
{{- if $secret.existingSecret }}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret.existingSecret }}
      key: {{ $secret.key }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A component's container env: the chart's entries, then extraEnv; an extraEnv entry of a
name the chart sets replaces the chart's in its place (one entry per name, the user's), so
$(VAR) references between the chart's entries keep resolving. */}}
{{- define "iris.env" -}}
{{- $extra := (index .root.Values .component).extraEnv | default list -}}
{{- $byName := dict -}}
{{- range $extra }}{{ $_ := set $byName .name . }}{{ end -}}
{{- $env := list -}}
{{- $placed := list -}}
{{- range (include "iris.chartEnv" . | fromYamlArray) -}}
{{- if hasKey $byName .name -}}
{{- $env = append $env (get $byName .name) -}}
{{- $placed = append $placed .name -}}
{{- else -}}
{{- $env = append $env . -}}
{{- end -}}
{{- end -}}
{{- range $extra -}}
{{- if not (has .name $placed) }}{{ $env = append $env . }}{{ end -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* Variables that carry secrets: extraEnv may set them only by reference. */}}
{{- define "iris.secretEnvHints" -}}
IRIS_REDIS_URL: "redis.external.existingSecret"
IRIS_REDIS_PASSWORD: "redis.cluster.password.existingSecret"
OTEL_EXPORTER_OTLP_HEADERS: "otel.headers.existingSecret"
AWS_ACCESS_KEY_ID: "media.s3.existingSecret"
AWS_SECRET_ACCESS_KEY: "media.s3.existingSecret"
IRIS_ADMIN_KEY: "gateway.adminKey.existingSecret"
IRIS_AGENT_API_KEY: "worker.agentApiKey.existingSecret"
IRIS_NTFY_TOKEN: "worker.push.ntfy.token.existingSecret"
{{- end -}}

{{- define "iris.workerDrainGraceMs" -}}
{{- $worker := .Values.worker -}}
{{- if kindIs "invalid" $worker.drainGraceMs -}}
{{- sub $worker.terminationGracePeriodSeconds $worker.drainMarginSeconds | mul 1000 -}}
{{- else -}}
{{- $worker.drainGraceMs | int64 -}}
{{- end -}}
{{- end -}}
