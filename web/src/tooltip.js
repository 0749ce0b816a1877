/*
 * One tooltip for a whole view: shown next to the pointer, kept inside the window,
 * built from text only.
 */
import { h } from './dom.js';

/* {show(lines, x, y), hide()}: lines are [label, value] pairs or a title string first. */
export function createTooltip(parent = document.body) {
  const el = h('div', { class: 'tooltip', role: 'tooltip', hidden: true });
  parent.append(el);
  return {
    show(title, lines, x, y) {
      el.replaceChildren(
        h('div', { class: 'tooltip-title' }, title),
        h('dl', {}, lines.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      );
      el.hidden = false;
      const pad = 14;
      const w = el.offsetWidth;
      const hgt = el.offsetHeight;
      const left = x + pad + w > window.innerWidth ? x - pad - w : x + pad;
      const top = y + pad + hgt > window.innerHeight ? y - pad - hgt : y + pad;
      el.style.left = `${Math.max(4, left)}px`;
      el.style.top = `${Math.max(4, top)}px`;
    },
    hide() {
      el.hidden = true;
    },
    destroy() {
      el.remove();
    },
  };
}
