{{/* Chart name, overridable with nameOverride. */}}
{{- define "postern-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name (63 characters at most, a DNS label): fullnameOverride; else the release name when it */}}
{{/* contains the chart name; else the chart name when the release name is its first word, so */}}
{{/* `helm install postern …` gives "postern-gateway", not "postern-postern-gateway"; else release-chart. */}}
{{- define "postern-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else if hasPrefix (printf "%s-" .Release.Name) $name }}
{{- $name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "postern-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "postern-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the gateway pod. */}}
{{- define "postern-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "postern-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Secret holding the admin password: the operator's existingSecret or the one this chart creates. */}}
{{- define "postern-gateway.adminSecretName" -}}
{{- .Values.admin.existingSecret | default (include "postern-gateway.fullname" .) }}
{{- end }}

{{- define "postern-gateway.adminSecretKey" -}}
{{- if .Values.admin.existingSecret }}
{{- .Values.admin.existingSecretKey }}
{{- else -}}
admin-password
{{- end }}
{{- end }}

{{/* PersistentVolumeClaim of /data: the operator's existingClaim or the one this chart creates. */}}
{{- /* Secret and key of the metrics token; empty name: no token. */}}
{{- define "postern-gateway.metricsSecretName" -}}
{{- if .Values.metrics.existingSecret }}{{ .Values.metrics.existingSecret }}{{ else if .Values.metrics.token }}{{ include "postern-gateway.fullname" . }}-metrics{{ end }}
{{- end }}

{{- define "postern-gateway.metricsSecretKey" -}}
{{- if .Values.metrics.existingSecret }}{{ .Values.metrics.existingSecretKey }}{{ else }}metrics-token{{ end }}
{{- end }}

{{- define "postern-gateway.claimName" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-data" (include "postern-gateway.fullname" .)) }}
{{- end }}

{{/* Number of gateway pods, refusing what cannot work: several gateways need one shared PostgreSQL. */}}
{{- define "postern-gateway.replicas" -}}
{{- $replicas := int .Values.replicas }}
{{- if lt $replicas 1 }}
{{- fail "replicas must be 1 or more" }}
{{- end }}
{{- if and .Values.database.existingSecret .Values.postgresql.enabled }}
{{- fail "set either database.existingSecret (your PostgreSQL) or postgresql.enabled (the bundled one), not both" }}
{{- end }}
{{- if and (gt $replicas 1) (not (include "postern-gateway.databaseSecretName" .)) }}
{{- fail (printf "replicas=%d needs PostgreSQL: every gateway shares one database, and SQLite on a pod's volume cannot be shared. Set database.existingSecret (a Secret with a postgres:// URL) or postgresql.enabled=true, or keep replicas=1" $replicas) }}
{{- end }}
{{- $replicas }}
{{- end }}

{{/* Secret and key of POSTERN_DATABASE_URL; empty name: SQLite in /data. */}}
{{- define "postern-gateway.databaseSecretName" -}}
{{- if .Values.database.existingSecret }}{{ .Values.database.existingSecret }}{{ else if .Values.postgresql.enabled }}{{ include "postern-gateway.fullname" . }}-postgresql{{ end }}
{{- end }}

{{- define "postern-gateway.databaseSecretKey" -}}
{{- if .Values.database.existingSecret }}{{ .Values.database.existingSecretKey }}{{ else }}database-url{{ end }}
{{- end }}

{{/* Labels that select the bundled PostgreSQL pod (apart from the gateway's, so no gateway Service selects it). */}}
{{- define "postern-gateway.postgresqlSelectorLabels" -}}
app.kubernetes.io/name: {{ include "postern-gateway.name" . }}-postgresql
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Secret and key of the shared secret key (POSTERN_SECRET_KEY_FILE); empty name: the key in /data. A single */}}
{{/* SQLite gateway keeps the key it made there, which its database was written with. */}}
{{- define "postern-gateway.secretKeySecretName" -}}
{{- if .Values.secretKey.existingSecret }}{{ .Values.secretKey.existingSecret }}{{ else if include "postern-gateway.databaseSecretName" . }}{{ include "postern-gateway.fullname" . }}-secret-key{{ end }}
{{- end }}

{{- define "postern-gateway.secretKeySecretKey" -}}
{{- if .Values.secretKey.existingSecret }}{{ .Values.secretKey.existingSecretKey }}{{ else }}secret-key{{ end }}
{{- end }}

{{/* POSTERN_WG_ENDPOINT as the pod sees it ($(POSTERN_GATEWAY_NAME) expanded by Kubernetes); empty: the gateway's */}}
{{/* own default, publicHost:port. Several replicas must each advertise their own. */}}
{{- define "postern-gateway.wgEndpoint" -}}
{{- $replicas := int (include "postern-gateway.replicas" .) }}
{{- if .Values.wireguard.endpoint }}
{{- if and (gt $replicas 1) (not (contains "$(POSTERN_GATEWAY_NAME)" .Values.wireguard.endpoint)) }}
{{- fail "wireguard.endpoint must contain $(POSTERN_GATEWAY_NAME) when replicas > 1: each gateway has its own WireGuard key, so each pod needs its own endpoint" }}
{{- end }}
{{- .Values.wireguard.endpoint }}
{{- else if gt $replicas 1 }}
{{- if or (regexMatch "^[0-9.]+$" .Values.publicHost) (contains ":" .Values.publicHost) }}
{{- fail "publicHost is an IP address: with replicas > 1 set wireguard.endpoint to a host:port with $(POSTERN_GATEWAY_NAME) in it, e.g. $(POSTERN_GATEWAY_NAME).wg.example.com:51820" }}
{{- end }}
{{- printf "$(POSTERN_GATEWAY_NAME).%s:%d" .Values.publicHost (int .Values.wireguard.port) }}
{{- end }}
{{- end }}
