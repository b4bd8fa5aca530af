{{/* The chart name, or nameOverride. */}}
{{- define "weir.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-<name>, or the release name when it already contains the name. */}}
{{- define "weir.fullname" -}}
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

{{- define "weir.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weir.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "weir.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "weir.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The guardfile's file name inside the pod. */}}
{{- define "weir.guardfileFile" -}}
{{- printf "%s.mcp.kdl" (default .Release.Name .Values.guardfileName) -}}
{{- end -}}

{{/* Fail the render on values that cannot make a working weir. */}}
{{- define "weir.validate" -}}
{{- $mode := .Values.runtime.mode -}}
{{- if not (has $mode (list "spec" "upstream")) -}}
{{- fail (printf "runtime.mode must be spec or upstream, not %q" (toString $mode)) -}}
{{- end -}}
{{- if and (eq $mode "spec") (not .Values.guardfile) -}}
{{- fail "spec mode needs the guardfile: --set-file guardfile=path/to/file.mcp.kdl" -}}
{{- end -}}
{{- if eq $mode "upstream" -}}
{{- if not .Values.upstream.url -}}
{{- fail "upstream mode needs upstream.url, the upstream MCP server's URL" -}}
{{- end -}}
{{- if not .Values.upstream.tools -}}
{{- fail "upstream mode needs upstream.tools: at least one tool to serve" -}}
{{- end -}}
{{- end -}}
{{- $replicas := int .Values.replicaCount -}}
{{- if lt $replicas 1 -}}
{{- fail (printf "replicaCount must be 1 or more, not %v" .Values.replicaCount) -}}
{{- end -}}
{{- if and (gt $replicas 1) (not .Values.stateKeys.existingSecret) -}}
{{- fail (printf "replicaCount %d needs stateKeys.existingSecret: every replica must sign cursors and confirmations with the same keys, or a client's next page or confirmation answer is refused when the load balancer sends it to another pod. Create one with: kubectl create secret generic weir-state --from-literal=keys=\"$(openssl rand -base64 48)\" and set stateKeys.existingSecret=weir-state" $replicas) -}}
{{- end -}}
{{- if and (gt $replicas 1) (eq $mode "spec") (regexMatch "(?m)^\\s*confirm\\s" .Values.guardfile) (not (or .Values.redis.url .Values.redis.existingSecret)) -}}
{{- fail (printf "replicaCount %d with a guardfile that confirms a tool needs redis.url or redis.existingSecret: answered confirmations are recorded there so an answer runs its call once across replicas (weir refuses to start without it)" $replicas) -}}
{{- end -}}
{{- range $name := list "preStopSeconds" "graceSeconds" "drainSeconds" -}}
{{- $v := index $.Values.shutdown $name -}}
{{- if or (not (or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v))) (lt (float64 $v) 0.0) (ne (float64 (int $v)) (float64 $v)) -}}
{{- fail (printf "shutdown.%s must be a whole number of seconds (0 or more), not %v" $name $v) -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.inboundAuth.existingSecret) (not .Values.inboundAuth.disabled) -}}
{{- fail "weir refuses to serve beyond loopback without inbound auth: set inboundAuth.existingSecret (a Secret holding the bearer token) or inboundAuth.disabled=true when a gateway authenticates callers" -}}
{{- end -}}
{{- range $env, $source := .Values.secret -}}
{{- if not (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" $env) -}}
{{- fail (printf "secret: %q is not an environment variable name" $env) -}}
{{- end -}}
{{- if kindIs "map" $source -}}
{{- if not (and $source.secretName $source.key) -}}
{{- fail (printf "secret.%s needs secretName and key" $env) -}}
{{- end -}}
{{- else if not (kindIs "string" $source) -}}
{{- fail (printf "secret.%s must be a secret-store path or {secretName, key}" $env) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Does any `secret` entry come from the secret store (a string path)? */}}
{{- define "weir.hasExternal" -}}
{{- range $env, $source := .Values.secret -}}
{{- if kindIs "string" $source -}}yes{{- end -}}
{{- end -}}
{{- end -}}

{{/* The weir command line after the binary. */}}
{{- define "weir.args" -}}
{{- $listen := printf "0.0.0.0:%v" .Values.http.port -}}
{{- if eq .Values.runtime.mode "spec" }}
- serve
- /config/{{ include "weir.guardfileFile" . }}
{{- else }}
- serve-upstream
- --upstream
- {{ .Values.upstream.url | quote }}
- --name
- {{ default (include "weir.fullname" .) .Values.upstream.name | quote }}
- --connect-timeout
- {{ .Values.upstream.connectTimeout | quote }}
{{- range .Values.upstream.tools }}
- --tool
- {{ . | quote }}
{{- end }}
{{- range .Values.upstream.headers }}
- --upstream-header
- {{ . | quote }}
{{- end }}
{{- range .Values.upstream.pins }}
- --pin
- {{ . | quote }}
{{- end }}
{{- end }}
- --http
- {{ $listen | quote }}
{{- if .Values.inboundAuth.existingSecret }}
- --inbound-token-env
- WEIR_INBOUND_TOKEN
{{- else }}
- --no-inbound-auth
{{- end }}
{{- range .Values.allowOrigins }}
- --allow-origin
- {{ . | quote }}
{{- end }}
- --log-level
- {{ .Values.logLevel | quote }}
- --shutdown-grace
- {{ mul (int .Values.shutdown.graceSeconds) 1000 | quote }}
- --drain-timeout
- {{ mul (int .Values.shutdown.drainSeconds) 1000 | quote }}
{{- if .Values.stateKeys.existingSecret }}
- --state-keys-env
- WEIR_STATE_KEYS
{{- end }}
{{- if and (eq .Values.runtime.mode "spec") (or .Values.redis.url .Values.redis.existingSecret) }}
- --state-store-env
- {{ .Values.redis.env | quote }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* preStop sleep + shutdown grace + drain, plus 5 s for the cut calls to answer and the exit. */}}
{{- define "weir.terminationGrace" -}}
{{- add (int .Values.shutdown.preStopSeconds) (int .Values.shutdown.graceSeconds) (int .Values.shutdown.drainSeconds) 5 -}}
{{- end -}}
