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
{{- /* An mcp-server stdio node (name and first argument bare, quoted or raw, after a line start,
  ";", "{" or a block comment; between them spaces, block comments or a line continuation): weir
  would start a command, which the default image cannot. */ -}}
{{- $gap := "(?:[ \\t]|\\\\[ \\t]*(?://[^\\n]*)?\\n|/\\*(?:[^*]|\\*+[^*/])*\\*+/)+" -}}
{{- $stdio := regexFind (printf "(?m)(^|[;{}]|\\*/)[ \\t]*(mcp-server|\"mcp-server\"|#+\"mcp-server\"#+)%s(stdio|\"stdio\"|#+\"stdio\"#+)[ \\t\\\\]+[^\\n]*" $gap) (toString .Values.guardfile) -}}
{{- if and (eq $mode "spec") $stdio (not .Values.image.carriesStdioCommand) -}}
{{- fail (printf "the guardfile wraps an MCP server over stdio (%s): weir would start that command in the pod, and the image cannot run it: it holds only the weir binary (no npx, node, python or shell), built without --allow-run, so the pod would crash-loop. Wrap the server over HTTP instead (mcp-server http \"https://.../mcp\" in the guardfile, or runtime.mode=upstream with upstream.url), or use an image of your own that carries the command and a weir built with --allow-run, and set image.carriesStdioCommand=true" (trimAll " \t;{" (regexReplaceAll "\\s+" (regexReplaceAll "^([;{}]|\\*/)[ \t]*" (trim $stdio) "") " "))) -}}
{{- end -}}
{{- if eq $mode "upstream" -}}
{{- if not .Values.upstream.url -}}
{{- fail "upstream mode needs upstream.url, the upstream MCP server's URL" -}}
{{- end -}}
{{- if not .Values.upstream.tools -}}
{{- fail "upstream mode needs upstream.tools: at least one tool to serve" -}}
{{- end -}}
{{- end -}}
{{- $rc := .Values.replicaCount -}}
{{- if or (not (or (kindIs "float64" $rc) (kindIs "int64" $rc) (kindIs "int" $rc))) (ne (float64 (int $rc)) (float64 $rc)) (lt (int $rc) 1) -}}
{{- fail (printf "replicaCount must be a whole number (1 or more), not %v" $rc) -}}
{{- end -}}
{{- $replicas := int $rc -}}
{{- if and (gt $replicas 1) (not .Values.stateKeys.existingSecret) -}}
{{- fail (printf "replicaCount %d needs stateKeys.existingSecret: every replica must sign cursors and confirmations with the same keys, or a client's next page or confirmation answer is refused when the load balancer sends it to another pod. Create one with: kubectl create secret generic weir-state --from-literal=keys=\"$(openssl rand -base64 48)\" and set stateKeys.existingSecret=weir-state" $replicas) -}}
{{- end -}}
{{- /* A top-level confirm node as KDL lets it be written: at a line start, after ";", "}" or a
  block comment, its name bare, quoted or raw. weir itself is the authority (it refuses to start
  without the store); this says so at render time instead of in a crash-looping pod. */ -}}
{{- $confirms := regexMatch "(?m)(^|[;}]|\\*/)[ \\t]*(confirm|\"confirm\"|#+\"confirm\"#+|r#*\"confirm\"#*)[ \\t\\\\]" .Values.guardfile -}}
{{- if and .Values.stateKeys.existingSecret (eq $mode "spec") $confirms (not (or .Values.redis.url .Values.redis.existingSecret)) -}}
{{- fail "stateKeys.existingSecret with a guardfile that confirms a tool needs redis.url or redis.existingSecret: with keys shared by every pod (and every pod that replaces one), answered confirmations must be recorded in a store they share, so an answer runs its call once; weir refuses to start without it" -}}
{{- end -}}
{{- /* A rate-limit store whose URL variable the release does not set: weir refuses to start.
  The plain and quoted spellings on one line; weir itself is the authority for any other. */ -}}
{{- if eq $mode "spec" -}}
{{- $unset := splitList "\n" (include "weir.unsetEnv" .) -}}
{{- range $line := splitList "\n" (toString .Values.guardfile) -}}
{{- $code := regexReplaceAll "//.*$" $line "" -}}
{{- range $m := regexFindAll "\"?store\"?[ \t]+\"?redis\"?[ \t]+\"?env\"?[ \t]+\"[A-Za-z_][A-Za-z0-9_]*\"" $code -1 -}}
{{- $name := regexReplaceAll "^.*[ \t]\"|\"$" $m "" -}}
{{- if has $name $unset -}}
{{- fail (printf "the guardfile's rate-limit store reads its URL from %s, which this release does not set, and weir refuses to start without it: set redis.existingSecret (or redis.url) with redis.env=%s, or secret.%s" $name $name $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if .Values.redis.url -}}
{{- if regexMatch "^[a-zA-Z][a-zA-Z0-9+.-]*://[^/@]*:[^/@]*@" (toString .Values.redis.url) -}}
{{- fail "redis.url carries a password, which would be written into the Deployment: put the URL in a Secret and set redis.existingSecret (and redis.key) instead" -}}
{{- end -}}
{{- end -}}
{{- range $name := list "preStopSeconds" "graceSeconds" "drainSeconds" -}}
{{- $v := index $.Values.shutdown $name -}}
{{- if or (not (or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v))) (lt (float64 $v) 0.0) (ne (float64 (int $v)) (float64 $v)) -}}
{{- fail (printf "shutdown.%s must be a whole number of seconds (0 or more), not %v" $name $v) -}}
{{- end -}}
{{- end -}}
{{- if and (gt $replicas 1) (eq (int .Values.shutdown.preStopSeconds) 0) (eq (int .Values.shutdown.graceSeconds) 0) -}}
{{- fail (printf "replicaCount %d with shutdown.preStopSeconds and shutdown.graceSeconds both 0: a pod stops taking connections while the Service still sends it some, so every rolling deploy loses calls. Set shutdown.graceSeconds (5 is the default)" $replicas) -}}
{{- end -}}
{{- if gt $replicas 1 -}}
{{- $mu := .Values.podDisruptionBudget.maxUnavailable -}}
{{- if kindIs "string" $mu -}}
{{- if not (regexMatch "^[0-9]+%$" $mu) -}}
{{- fail (printf "podDisruptionBudget.maxUnavailable must be a whole number or a percentage such as 34%%, not %q" $mu) -}}
{{- end -}}
{{- if eq (int (trimSuffix "%" $mu)) 0 -}}
{{- fail (printf "podDisruptionBudget.maxUnavailable %s lets no pod be evicted: node drains and cluster upgrades would wait forever. Use 1" $mu) -}}
{{- end -}}
{{- else if or (not (or (kindIs "float64" $mu) (kindIs "int64" $mu) (kindIs "int" $mu))) (ne (float64 (int $mu)) (float64 $mu)) -}}
{{- fail (printf "podDisruptionBudget.maxUnavailable must be a whole number or a percentage such as 34%%, not %v" $mu) -}}
{{- else if eq (int $mu) 0 -}}
{{- fail "podDisruptionBudget.maxUnavailable 0 lets no pod be evicted: node drains and cluster upgrades would wait forever. Use 1" -}}
{{- else if ge (int $mu) $replicas -}}
{{- fail (printf "podDisruptionBudget.maxUnavailable %d lets all %d replicas be evicted at once, so a node drain can stop the service. Use fewer than replicaCount (1 is the default)" (int $mu) $replicas) -}}
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

{{/* The variables the release sets in weir's container, one per line. */}}
{{- define "weir.setEnv" -}}
{{- if or .Values.redis.url .Values.redis.existingSecret }}{{ .Values.redis.env }}{{ "\n" }}{{ end -}}
{{- if .Values.runtime.injectSecrets }}{{ range $env, $_ := .Values.secret }}{{ $env }}{{ "\n" }}{{ end }}{{ end -}}
{{- range .Values.extraEnv }}{{ .name }}{{ "\n" }}{{ end -}}
{{- end -}}

{{/* Variables a spec-mode guardfile reads (`env "NAME"` outside a // comment) that the release does not set, one per line. */}}
{{- define "weir.unsetEnv" -}}
{{- if eq .Values.runtime.mode "spec" -}}
{{- $set := splitList "\n" (include "weir.setEnv" .) -}}
{{- $seen := list -}}
{{- range $line := splitList "\n" (toString .Values.guardfile) -}}
{{- $code := regexReplaceAll "//.*$" $line "" -}}
{{- range $m := regexFindAll "\\benv[ \t]+\"[A-Za-z_][A-Za-z0-9_]*\"" $code -1 -}}
{{- $name := regexReplaceAll "^env[ \t]+\"|\"$" $m "" -}}
{{- if and (not (has $name $set)) (not (has $name $seen)) -}}
{{- $seen = append $seen $name -}}
{{ $name }}{{ "\n" }}
{{- end -}}
{{- end -}}
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
