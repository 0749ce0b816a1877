{{/*
Names and labels shared by every template. Object names are "<release>-<part>"
(release "ripple": ripple-server, ripple-webhook, ...); kubectl ripple looks for the
Service ripple-server in ripple-system unless told otherwise.
*/}}
{{- define "ripple.name" -}}
{{- printf "%s-%s" .root.Release.Name .part | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ripple.labels" -}}
app.kubernetes.io/name: ripple
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .part }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "ripple.selector" -}}
app.kubernetes.io/name: ripple
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .part }}
{{- end -}}

{{- define "ripple.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The webhook's TLS Secret, the trace server's token Secrets. */}}
{{- define "ripple.tlsSecret" -}}{{ include "ripple.name" (dict "root" . "part" "webhook-tls") }}{{- end -}}
{{- define "ripple.writerSecret" -}}{{ include "ripple.name" (dict "root" . "part" "server-writer-token") }}{{- end -}}
{{- define "ripple.readerSecret" -}}{{ include "ripple.name" (dict "root" . "part" "server-reader-token") }}{{- end -}}

{{/* The webhook Service's DNS name: the serving certificate's name. */}}
{{- define "ripple.webhookHost" -}}
{{- printf "%s.%s.svc" (include "ripple.name" (dict "root" . "part" "webhook")) .Release.Namespace -}}
{{- end -}}

{{/* The trace server as the webhook reaches it. */}}
{{- define "ripple.serverURL" -}}
{{- printf "http://%s.%s.svc:%d" (include "ripple.name" (dict "root" . "part" "server")) .Release.Namespace (int .Values.server.port) -}}
{{- end -}}

{{/* Where the webhook and the watch agent send: webhook.traceServer, else this
release's trace server through its Service. */}}
{{- define "ripple.traceServer" -}}
{{- .Values.webhook.traceServer | default (include "ripple.serverURL" .) -}}
{{- end -}}

{{/* Pod-level settings every Pod of the chart shares. */}}
{{- define "ripple.podCommon" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Container-level settings every container shares. */}}
{{- define "ripple.containerCommon" -}}
image: {{ include "ripple.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
{{- end -}}

{{/* The trace server's tokens as files: /etc/ripple/tokens/writer and, with
"reader", .../reader. Called with (dict "root" . "reader" true|false). */}}
{{- define "ripple.tokensVolume" -}}
- name: tokens
  projected:
    sources:
    - secret:
        name: {{ include "ripple.writerSecret" .root }}
        items: [{key: token, path: writer}]
    {{- if .reader }}
    - secret:
        name: {{ include "ripple.readerSecret" .root }}
        items: [{key: token, path: reader}]
    {{- end }}
{{- end -}}

{{/* "true" when cert-manager makes the webhook's certificate: certs.certManager.enabled
true, or "auto" (the default) and the cluster serves cert-manager.io/v1. Empty
otherwise. */}}
{{- define "ripple.certManager" -}}
{{- $on := .Values.certs.certManager.enabled -}}
{{- if eq (toString $on) "auto" -}}
{{- if .Capabilities.APIVersions.Has "cert-manager.io/v1" }}true{{ end -}}
{{- else if $on -}}
true
{{- end -}}
{{- end -}}
