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

{{/* The webhook's and the trace server's TLS Secrets (one CA: each holds it as
ca.crt), the trace server's token Secrets, the webhook replicas' context key. */}}
{{- define "ripple.tlsSecret" -}}{{ include "ripple.name" (dict "root" . "part" "webhook-tls") }}{{- end -}}
{{- define "ripple.serverTlsSecret" -}}{{ include "ripple.name" (dict "root" . "part" "server-tls") }}{{- end -}}
{{- define "ripple.contextKeySecret" -}}{{ include "ripple.name" (dict "root" . "part" "context-key") }}{{- end -}}
{{- define "ripple.writerSecret" -}}{{ include "ripple.name" (dict "root" . "part" "server-writer-token") }}{{- end -}}
{{- define "ripple.readerSecret" -}}{{ include "ripple.name" (dict "root" . "part" "server-reader-token") }}{{- end -}}

{{/* The webhook Service's DNS name: the serving certificate's name. */}}
{{- define "ripple.webhookHost" -}}
{{- printf "%s.%s.svc" (include "ripple.name" (dict "root" . "part" "webhook")) .Release.Namespace -}}
{{- end -}}

{{/* The trace server Service's DNS name: its serving certificate's name. */}}
{{- define "ripple.serverHost" -}}
{{- printf "%s.%s.svc" (include "ripple.name" (dict "root" . "part" "server")) .Release.Namespace -}}
{{- end -}}

{{/* The trace server as the webhook reaches it: HTTPS, so that the writer token
never crosses the Pod network in clear. */}}
{{- define "ripple.serverURL" -}}
{{- printf "https://%s:%d" (include "ripple.serverHost" .) (int .Values.server.port) -}}
{{- end -}}

{{/* Where the webhook and the watch agent send: webhook.traceServer, else this
release's trace server through its Service. */}}
{{- define "ripple.traceServer" -}}
{{- .Values.webhook.traceServer | default (include "ripple.serverURL" .) -}}
{{- end -}}

{{/* The host of a URL, without its port. */}}
{{- define "ripple.urlHost" -}}
{{- (split ":" (urlParse .).host)._0 -}}
{{- end -}}

{{/* The shippers' flags to the trace server: the URL, the writer token, and for
https the CA that signed the trace server's certificate. Mount
ripple.serverCaVolume at /etc/ripple/server-ca. */}}
{{- define "ripple.shipperArgs" -}}
{{- $url := include "ripple.traceServer" . -}}
- --trace-server={{ $url }}
- --trace-server-token-file=/etc/ripple/tokens/writer
{{- if hasPrefix "https://" $url }}
- --trace-server-ca=/etc/ripple/server-ca/ca.crt
{{- end }}
{{- end -}}

{{/* The trace server's CA only (never its key), for the shippers to verify it. */}}
{{- define "ripple.serverCaVolume" -}}
- name: server-ca
  secret:
    secretName: {{ include "ripple.serverTlsSecret" . }}
    items: [{key: ca.crt, path: ca.crt}]
    defaultMode: 288 # 0440
{{- end -}}

{{/* Values that the schema cannot compare with each other: refused at lint and
template time, not by a failing install hook. */}}
{{- define "ripple.validate" -}}
{{- if ge (int .Values.certs.renewBeforeDays) (int .Values.certs.days) -}}
{{- fail (printf "certs.renewBeforeDays (%d) must be less than certs.days (%d): ripple certs would replace the certificate on every run" (int .Values.certs.renewBeforeDays) (int .Values.certs.days)) -}}
{{- end -}}
{{- if and .Values.webhook.clientAuth.enabled (not (or .Values.webhook.clientAuth.caBundle .Values.webhook.clientAuth.caSecret)) -}}
{{- fail "webhook.clientAuth.enabled needs webhook.clientAuth.caBundle or webhook.clientAuth.caSecret: the CA that signed the API server's client certificate" -}}
{{- end -}}
{{- if and .Values.webhook.clientAuth.caBundle .Values.webhook.clientAuth.caSecret -}}
{{- fail "webhook.clientAuth: give caBundle or caSecret, not both" -}}
{{- end -}}
{{- if and .Values.webhook.clientAuth.enabled (not .Values.webhook.clientAuth.guardCertSecret) -}}
{{- fail "webhook.clientAuth.enabled needs webhook.clientAuth.guardCertSecret: a kubernetes.io/tls Secret with a client certificate of the same CA for ripple-guard's probes (without it the guard takes the webhook out of the path for good)" -}}
{{- end -}}
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
    defaultMode: 288 # 0440: the Pod's user and its fsGroup only
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
