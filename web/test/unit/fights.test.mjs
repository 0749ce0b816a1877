import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fightRows, fightText } from '../../src/fights.js';
import { fights as fightsAnswer } from './details-fixture.mjs';

import { ROOT as A, MERGE as B } from './fixture.mjs';

test('an object\'s fights: its own only, the field as people read it, both writers, the writes', () => {
  const rows = fightRows(fightsAnswer(), 'u-deploy');
  assert.equal(rows.length, 1);
  const r = rows[0];
  assert.equal(fightText(r), 'spec.replicas: kubernetes-admin ↔ hpa-like, 3 reversals');
  assert.equal(r.first, '2026-11-21 22:18:34.010Z');
  assert.deepEqual(r.writes.map((w) => [w.writer, w.cpid]), [['kubernetes-admin', A], ['hpa-like', A], ['kubernetes-admin', B], ['hpa-like', B]]);
});

test('none from a server older than fights, one that has them off, or an answer of another shape', () => {
  assert.equal(fightRows(null, 'u'), null);
  assert.equal(fightRows({ enabled: false, fights: [] }, 'u'), null);
  assert.equal(fightRows({ fights: 'no' }, 'u'), null);
  assert.deepEqual(fightRows({ fights: [] }, 'u'), []);
  const [r] = fightRows({ fights: [{ object: { uid: 'u' }, managers: [null, { writer: 5 }], reversals: 'x', writes: [null, { cpid: 3 }] }] }, 'u');
  assert.equal(fightText(r), '(the whole object): ? ↔ ?, 0 reversals');
  assert.deepEqual(r.writes, [{ writer: '?', cpid: '', time: '–' }]);
});
