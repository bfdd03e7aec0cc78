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
