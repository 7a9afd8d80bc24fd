{{- define "cache.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cache.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "cache.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cache.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "cache.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "cache.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cache.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: cache
{{- end -}}

{{/*
"registry/repository:tag" or "...@digest". Only this chart's own registry value is used.
Usage: include "cache.image" .Values.image
*/}}
{{- define "cache.image" -}}
{{- $ref := .repository -}}
{{- if .registry -}}
{{- $ref = printf "%s/%s" .registry .repository -}}
{{- end -}}
{{- if .digest -}}
{{- printf "%s@%s" $ref .digest -}}
{{- else -}}
{{- printf "%s:%s" $ref (toString .tag) -}}
{{- end -}}
{{- end -}}

{{- define "cache.imagePullSecrets" -}}
{{- $names := list -}}
{{- $global := .Values.global | default dict -}}
{{- range (concat ($global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list)) -}}
{{- if kindIs "map" . -}}
{{- $names = append $names .name -}}
{{- else -}}
{{- $names = append $names (toString .) -}}
{{- end -}}
{{- end -}}
{{- if $names }}
imagePullSecrets:
{{- range ($names | uniq) }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end -}}
