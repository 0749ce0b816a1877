/* A small Deployment scale cascade as the server answers it, for the unit tests. */

export const ROOT = '11111111-1111-4111-8111-111111111111';
export const MERGE = '22222222-2222-4222-8222-222222222222';
export const OTHER = '33333333-3333-4333-8333-333333333333';

const t = (ms) => `2026-11-21T22:18:34.${String(ms * 1e6).padStart(9, '0')}Z`;
let n = 0;
function span(cpid, service, name, start, end, attrs) {
  n += 1;
  return { cpid, span_id: n.toString(16).padStart(16, '0'), service, name, start: t(start), end: t(end),
    attributes: { namespace: 'default', uid: '', resourceVersion: '', user: service, operation: 'UPDATE', ...attrs } };
}

export function cascade() {
  n = 0;
  const spans = [
    span(ROOT, 'kubernetes-admin', 'update deployments/scale', 10, 10.4, { kind: 'Deployment', name: 'web', subresource: 'scale' }),
    span(ROOT, 'deployment-controller', 'update replicasets', 10, 13, { kind: 'ReplicaSet', name: 'web-abc', owner: 'Deployment/web' }),
    span(ROOT, 'replicaset-controller', 'create pods', 10, 15, { kind: 'Pod', name: '', owner: 'ReplicaSet/web-abc' }),
    span(ROOT, 'replicaset-controller', 'create pods', 10, 16, { kind: 'Pod', name: '', owner: 'ReplicaSet/web-abc' }),
    span(ROOT, 'default-scheduler', 'create pods/binding', 10, 30, { kind: 'Pod', name: 'web-abc-x1', owner: 'ReplicaSet/web-abc', subresource: 'binding' }),
    span(ROOT, 'default-scheduler', 'create pods/binding', 10, 40, { kind: 'Pod', name: 'web-abc-x2', owner: 'ReplicaSet/web-abc', subresource: 'binding' }),
    span(MERGE, 'kwok-controller', 'update pods/status', 50, 90, { kind: 'Pod', name: 'web-abc-x1', owner: 'ReplicaSet/web-abc', subresource: 'status' }),
    span(MERGE, 'kwok-controller', 'update pods/status', 50, 150, { kind: 'Pod', name: 'web-abc-x2', owner: 'ReplicaSet/web-abc', subresource: 'status' }),
    span(ROOT, 'other-sender', 'reconcile', 20, 25),
  ];
  delete spans[8].attributes;
  const mergelogs = [
    { cpid: ROOT, sources: [], time: t(10), component: 'kubernetes-admin',
      object: { kind: 'Deployment', namespace: 'default', name: 'web', uid: 'u1' } },
    { cpid: MERGE, sources: [ROOT, OTHER], time: t(50), component: 'kwok-controller',
      object: { kind: 'Pod', namespace: 'default', name: 'web-abc-x1', uid: 'u2' } },
  ];
  return { cpid: ROOT, related: [ROOT, MERGE], spans, mergelogs };
}
