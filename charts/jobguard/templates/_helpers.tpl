{{- define "jobguard.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "jobguard.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "jobguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jobguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "jobguard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "jobguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "jobguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "jobguard.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "jobguard.tlsSecretName" -}}
{{- if eq .Values.certificates.mode "existingSecret" -}}
{{- required "certificates.existingSecret.name is required in existingSecret mode" .Values.certificates.existingSecret.name -}}
{{- else -}}
{{- printf "%s-tls" (include "jobguard.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "jobguard.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The namespaces the webhooks never see, and the optional opt-in label. */}}
{{- define "jobguard.namespaceSelector" -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values:
        {{- $excluded := concat (list "kube-system" .Release.Namespace) .Values.webhook.excludeNamespaces | uniq }}
        {{- range $excluded }}
        - {{ . | quote }}
        {{- end }}
    {{- if .Values.webhook.optIn }}
    - key: {{ .Values.webhook.optInLabel | quote }}
      operator: In
      values: ["true"]
    {{- end }}
{{- end -}}

{{- define "jobguard.clientConfig" -}}
clientConfig:
  service:
    name: {{ include "jobguard.fullname" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- if .caBundle }}
  caBundle: {{ .caBundle }}
  {{- end }}
{{- end -}}
