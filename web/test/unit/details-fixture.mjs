/*
 * Details and stalls of fixture.mjs's cascade as ripple-server answers them
 * (GET /v1/cpids/{cpid}/details, /stalls, /v1/stalls; docs/api.md), for the unit tests
 * and the browser check of them (../e2e/details.mjs). Span ids are fixture.mjs's: 1 the
 * scale, 2 the ReplicaSet update, 3 and 4 the Pod creates, 5 and 6 the bindings.
 */
import { ROOT, MERGE } from './fixture.mjs';

export const sid = (n) => n.toString(16).padStart(16, '0');
const t = (ms) => `2026-11-21T22:18:34.${String(ms * 1e6).padStart(9, '0')}Z`;

const obj = (kind, name, uid) => ({ apiVersion: kind === 'Pod' ? 'v1' : 'apps/v1', kind, namespace: 'default', name, uid });

export function details() {
  return {
    cpid: ROOT, truncated: false,
    writes: [
      { span_id: sid(1),
        change: { type: 'change', op: 'update', time: t(11), object: obj('Deployment', 'web', 'u-deploy'),
          resourceVersion: '4180', previousResourceVersion: '4171', cpid: ROOT,
          diff: [{ path: '/spec/replicas', old: 1, new: 3 }] },
        audit: { type: 'audit', time: t(10.5), auditID: 'a-1', verb: 'patch', user: 'kubernetes-admin',
          groups: ['system:masters', 'system:authenticated'], userAgent: 'kubectl/v1.31.0 (linux/amd64)',
          sourceIP: '10.0.0.1', object: { resource: 'deployments', subresource: 'scale', namespace: 'default', name: 'web', uid: 'u-deploy', kind: 'Scale' },
          code: 200, writtenResourceVersion: '4180', spanId: sid(1), cpid: ROOT } },
      { span_id: sid(2),
        change: { type: 'change', op: 'update', time: t(13.5), object: obj('ReplicaSet', 'web-abc', 'u-rs'),
          resourceVersion: '4182', previousResourceVersion: '4175', cpid: ROOT,
          diff: [
            { path: '/spec/replicas', old: 1, new: 3 },
            { path: '/metadata/annotations/deployment.kubernetes.io~1desired-replicas', old: '1', new: '3' },
            { path: '/metadata/labels/added', new: 'yes' },
            { path: '/metadata/labels/removed', old: 'gone' },
            { path: '/spec/template/metadata/annotations/secret-ish', redacted: true },
            { path: '/spec/template/spec/containers/0/env', old: [],
              new: [{ name: 'A_LONG_VARIABLE_NAME', value: 'a value long enough to be shown on lines of its own' }] },
          ] },
        audit: null },
      { span_id: sid(3),
        change: { type: 'change', op: 'create', time: t(15.5), object: obj('Pod', 'web-abc-x1', 'u-x1'),
          resourceVersion: '4190', cpid: ROOT,
          snapshot: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-abc-x1', namespace: 'default', generateName: 'web-abc-' },
            spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
        audit: { type: 'audit', time: t(15), auditID: 'a-3', verb: 'create', user: 'system:serviceaccount:kube-system:replicaset-controller',
          groups: ['system:serviceaccounts'], userAgent: 'kube-controller-manager/v1.31.0', code: 201,
          object: { resource: 'pods', namespace: 'default', name: 'web-abc-x1', kind: 'Pod', generateName: 'web-abc-' }, spanId: sid(3) } },
      { span_id: sid(5), change: null,
        audit: { type: 'audit', time: t(30), auditID: 'a-5', verb: 'create', user: 'system:kube-scheduler', groups: [],
          userAgent: 'kube-scheduler/v1.31.0', code: 409, status: 'Failure', reason: 'Conflict',
          message: 'Operation cannot be fulfilled on pods/binding "web-abc-x1": pod web-abc-x1 is already assigned to node "n1"',
          object: { resource: 'pods', subresource: 'binding', namespace: 'default', name: 'web-abc-x1' }, spanId: sid(5) } },
    ],
    changes: [
      { type: 'change', op: 'create', time: t(16.5), object: obj('Pod', 'web-abc-x3', 'u-x3'), resourceVersion: '4191', cpid: ROOT,
        snapshot: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-abc-x3', generateName: 'web-abc-' } } },
    ],
    events: [
      { type: 'event', time: t(40), object: { kind: 'Pod', namespace: 'default', name: 'web-abc-x2', uid: 'u-x2' },
        reason: 'FailedScheduling', eventType: 'Warning', source: 'default-scheduler',
        message: '0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.', count: 4, uid: 'e-2' },
      { type: 'event', time: t(12), object: { kind: 'Deployment', namespace: 'default', name: 'web', uid: 'u-deploy' },
        reason: 'ScalingReplicaSet', eventType: 'Normal', source: 'deployment-controller',
        message: 'Scaled up replica set web-abc to 3', count: 1, uid: 'e-1' },
    ],
    audit: [
      { type: 'audit', time: t(20), auditID: 'a-9', verb: 'delete', user: 'alice', groups: ['dev'], userAgent: 'kubectl/v1.31.0',
        code: 403, status: 'Failure', reason: 'Forbidden', message: 'pods "web-abc-x1" is forbidden: User "alice" cannot delete resource "pods"',
        object: { resource: 'pods', namespace: 'default', name: 'web-abc-x1' } },
    ],
  };
}

/* Two stalled writes: a Pod create waiting for its binding, the ReplicaSet update for anything. */
export function stalls() {
  return { enabled: true, stalls: [
    { cpid: ROOT, span_id: sid(4), service: 'replicaset-controller', name: 'create pods',
      object: { kind: 'Pod', namespace: 'default', name: '', owner: 'ReplicaSet/web-abc' },
      expect: { service: 'default-scheduler', name: 'create pods/binding' },
      admitted: t(16), flagged: t(20), waiting_seconds: 41.2, p99_seconds: 0.35, samples: 24, share: 1,
      events: [{ type: 'event', time: t(40), object: { kind: 'Pod', namespace: 'default', name: 'web-abc-x2', uid: 'u-x2' },
        reason: 'FailedScheduling', eventType: 'Warning', source: 'default-scheduler',
        message: '0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.', count: 4, uid: 'e-2' }] },
    { cpid: ROOT, span_id: sid(2), service: 'deployment-controller', name: 'update replicasets',
      object: { kind: 'ReplicaSet', namespace: 'default', name: 'web-abc', owner: 'Deployment/web' },
      expect: null, admitted: t(13), flagged: t(20), waiting_seconds: 12, p99_seconds: 1.5, samples: 40, share: 0.95, events: [] },
  ] };
}

/* An object's field fights (GET /v1/fights?uid=, docs/api.md "Field fights"). */
export function fights(uid = 'u-deploy') {
  return { enabled: true, window_seconds: 600, truncated: false, fights: [
    { object: { kind: 'Deployment', namespace: 'default', name: 'web', uid }, path: '/spec/replicas',
      managers: [{ writer: 'kubernetes-admin', user: 'kubernetes-admin', reversals: 1 }, { writer: 'hpa-like', reversals: 2 }],
      reversals: 3, first: '2026-11-21T22:18:34.010Z', last: '2026-11-21T22:18:40Z',
      writes: [{ writer: 'kubernetes-admin', cpid: ROOT, time: '2026-11-21T22:18:34.010Z' },
        { writer: 'hpa-like', cpid: ROOT, time: '2026-11-21T22:18:35Z' }, { writer: 'kubernetes-admin', cpid: MERGE, time: '2026-11-21T22:18:38Z' },
        { writer: 'hpa-like', cpid: MERGE, time: '2026-11-21T22:18:40Z' }] },
    { object: { kind: 'Deployment', uid: 'other' }, path: '/spec/paused', managers: [], reversals: 2, writes: [] }] };
}
