{{/* Chart name, overridable with nameOverride. */}}
{{- define "postern-node.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name (63 characters at most, a DNS label): fullnameOverride; else the release name when it */}}
{{/* contains the chart name; else the chart name when the release name is its first word, so */}}
{{/* `helm install postern …` gives "postern-node", not "postern-postern-node"; else release-chart. */}}
{{- define "postern-node.fullname" -}}
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
{{- define "postern-node.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "postern-node.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the node client pod. */}}
{{- define "postern-node.selectorLabels" -}}
app.kubernetes.io/name: {{ include "postern-node.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Secret holding the token: the operator's existingSecret or the one this chart creates. */}}
{{- define "postern-node.tokenSecretName" -}}
{{- .Values.token.existingSecret | default (include "postern-node.fullname" .) }}
{{- end }}

{{- define "postern-node.tokenSecretKey" -}}
{{- if .Values.token.existingSecret }}
{{- .Values.token.existingSecretKey }}
{{- else -}}
token
{{- end }}
{{- end }}
