{{/*
Chart name, truncated to 63 characters (DNS label).
*/}}
{{- define "storefront.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Fully qualified app name: the release name when it already contains the chart name,
else "<release>-<chart>". Component names append "-web", "-db", ... so it stays under 56.
*/}}
{{- define "storefront.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 56 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 56 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 56 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
"name-version" for the helm.sh/chart label.
*/}}
{{- define "storefront.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Standard labels. Usage: include "storefront.labels" (dict "context" $ "component" "web")
*/}}
{{- define "storefront.labels" -}}
helm.sh/chart: {{ include "storefront.chart" .context }}
{{ include "storefront.selectorLabels" . }}
app.kubernetes.io/version: {{ .context.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .context.Release.Service }}
app.kubernetes.io/part-of: storefront
{{- with .context.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Selector labels (immutable on Deployments and StatefulSets: never add to them).
*/}}
{{- define "storefront.selectorLabels" -}}
app.kubernetes.io/name: {{ include "storefront.name" .context }}
app.kubernetes.io/instance: {{ .context.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{/*
Metadata annotations shared by every object (commonAnnotations), merged with extra ones.
Usage: include "storefront.annotations" (dict "context" $ "extra" $someMap)
*/}}
{{- define "storefront.annotations" -}}
{{- $all := merge (dict) (default (dict) .extra) (default (dict) .context.Values.commonAnnotations) -}}
{{- if $all }}
{{- toYaml $all }}
{{- end }}
{{- end -}}

{{/*
Component object names.
*/}}
{{- define "storefront.web.fullname" -}}{{ include "storefront.fullname" . }}-web{{- end -}}
{{- define "storefront.database.fullname" -}}{{ include "storefront.fullname" . }}-db{{- end -}}
{{- define "storefront.migrations.fullname" -}}{{ include "storefront.fullname" . }}-migrate{{- end -}}
{{- define "storefront.report.fullname" -}}{{ include "storefront.fullname" . }}-report{{- end -}}

{{/*
Host name of the cache subchart's Service (its fullname is "<release>-cache").
*/}}
{{- define "storefront.cache.host" -}}
{{- printf "%s-cache" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Database connection: host (the headless Service's stable pod name) and Secret.
*/}}
{{- define "storefront.database.host" -}}
{{- printf "%s-0.%s.%s.svc" (include "storefront.database.fullname" .) (include "storefront.database.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "storefront.database.secretName" -}}
{{- if .Values.database.existingSecret -}}
{{- .Values.database.existingSecret -}}
{{- else -}}
{{- include "storefront.database.fullname" . -}}
{{- end -}}
{{- end -}}

{{/*
Service account name.
*/}}
{{- define "storefront.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "storefront.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
Image reference, after Bitnami's common.images.image:
  [registry/]repository(:tag|@digest)
global.imageRegistry replaces the component's registry; an empty registry leaves the reference
short (the runtime then means docker.io); the tag defaults to the chart's appVersion; a digest
wins over the tag.
Usage: include "storefront.image" (dict "image" .Values.web.image "context" $)
*/}}
{{- define "storefront.image" -}}
{{- $registry := .image.registry | default "" -}}
{{- with .context.Values.global -}}
{{- if .imageRegistry -}}
{{- $registry = .imageRegistry -}}
{{- end -}}
{{- end -}}
{{- $repository := required "image.repository is required" .image.repository -}}
{{- $ref := $repository -}}
{{- if $registry -}}
{{- $ref = printf "%s/%s" $registry $repository -}}
{{- end -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $ref .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref (.image.tag | default .context.Chart.AppVersion | toString) -}}
{{- end -}}
{{- end -}}

{{/*
imagePullSecrets of a pod spec: global.imagePullSecrets (strings or {name: ...} objects).
Renders nothing when there are none.
Usage: with (include "storefront.imagePullSecrets" $ | trim) }}{{ . | nindent 6 }}{{ end
*/}}
{{- define "storefront.imagePullSecrets" -}}
{{- $names := list -}}
{{- with .Values.global -}}
{{- range (.imagePullSecrets | default list) -}}
{{- if kindIs "map" . -}}
{{- $names = append $names .name -}}
{{- else -}}
{{- $names = append $names (toString .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $names }}
imagePullSecrets:
{{- range ($names | uniq) }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Scheduling fields of a pod spec from a component's values (nodeSelector, tolerations, affinity,
topologySpreadConstraints). Usage as for storefront.imagePullSecrets, with .Values.web etc.
*/}}
{{- define "storefront.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
Pod template annotations: the component's podAnnotations plus any extras (checksums).
Usage: include "storefront.podAnnotations" (dict "values" .Values.web "extra" (dict ...))
*/}}
{{- define "storefront.podAnnotations" -}}
{{- $all := merge (dict) (default (dict) .extra) (default (dict) .values.podAnnotations) -}}
{{- if $all }}
annotations:
  {{- toYaml $all | nindent 2 }}
{{- end }}
{{- end -}}
