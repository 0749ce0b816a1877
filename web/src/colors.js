/*
 * Colours of components: one hue per service, in the order services first wrote in the
 * trace, from a palette readable on white and told apart by people with the common
 * colour-vision deficiencies (Okabe-Ito first, then Tableau's). A legend to go with it.
 */
import { h } from './dom.js';

const PALETTE = [
  '#0072b2', '#e69f00', '#009e73', '#cc79a7', '#d55e00', '#56b4e9', '#8c6d31',
  '#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#e15759', '#76b7b2', '#9c755f', '#bab0ac',
];

/* A function service -> colour, stable for the given order of services. */
export function colorScale(services) {
  const map = new Map(services.map((svc, i) => [svc, PALETTE[i % PALETTE.length]]));
  return (svc) => map.get(svc) ?? '#888888';
}

/* A legend: each service with its swatch and, when given, a count. */
export function legend(services, color, counts = new Map()) {
  return h('ul', { class: 'legend', 'aria-label': 'Components' },
    services.map((svc) => h('li', { class: 'legend-item', dataset: { service: svc } },
      swatch(color(svc)),
      h('span', { class: 'legend-name' }, svc || 'unknown'),
      counts.has(svc) ? h('span', { class: 'legend-count' }, String(counts.get(svc))) : null)));
}

/* A small coloured square. */
export function swatch(color) {
  return h('span', { class: 'swatch', style: { backgroundColor: color }, 'aria-hidden': 'true' });
}
