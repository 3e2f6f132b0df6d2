// The live view: polls /handoff/state once a second and draws it; between answers the leases and holds count down on
// this page's own clock (the server gives what remains of each, so the two clocks need not agree). Everything shown
// is set as text, never as markup: request ids come from clients.
'use strict';

const STATE = '/handoff/state';
const POLL_MS = 1000;

let key = sessionStorage.getItem('handoff-admin-key') || '';
let receivedAt = performance.now();

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (name === 'class') node.className = value;
    else if (name.startsWith('data-')) node.setAttribute(name, value);
    else node[name] = value;
  }
  for (const child of children) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function replaceRows(tbody, rows, columns, emptyText) {
  tbody.replaceChildren(...(rows.length ? rows : [el('tr', {class: 'empty'}, el('td', {colSpan: columns}, emptyText))]));
}

function shortId(id) {
  return id && id.length > 12 ? id.slice(0, 8) + '…' : id;
}

function duration(ms) {
  if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

// An element whose text counts down from msLeft (as of the last answer) to zero.
function countdown(msLeft) {
  const node = el('td', {class: 'num countdown', 'data-ms-left': msLeft});
  tick(node);
  return node;
}

function tick(node) {
  const left = Math.max(0, Number(node.dataset.msLeft) - (performance.now() - receivedAt));
  node.textContent = left === 0 ? 'due' : duration(left);
  node.classList.toggle('warn', left > 0 && left < 5000);
}

function drawDrain(drain) {
  const card = (label, value, id, cls) => el('div', {class: 'card'}, el('div', {class: 'dim'}, label),
      el('div', {class: 'big ' + (cls || ''), id}, value));
  const state = drain.draining ? (drain.complete ? 'complete' : 'draining') : 'not draining';
  document.getElementById('drain').replaceChildren(
      card('drain', state, 'drain-state', drain.draining ? (drain.complete ? 'ok' : 'warn') : ''),
      card('since', drain.since ? new Date(drain.since).toLocaleTimeString() : '–', 'drain-since'),
      card('live sessions', drain.live, 'drain-live'),
      card('engine-held KV', drain.engine_held, 'drain-held'),
      card('running here', drain.running_here, 'drain-running'));
}

function drawByState(byState) {
  // every state, in the order of the state machine (the server's order)
  const states = Object.keys(byState);
  const table = document.getElementById('by-state');
  table.tHead.rows[0].replaceChildren(...states.map(s => el('th', {}, s.toLowerCase())));
  table.tBodies[0].rows[0].replaceChildren(...states.map(s => el('td', {class: 'num', 'data-state': s}, byState[s])));
}

function drawRoutes(routes) {
  document.getElementById('routes').replaceChildren(...routes.map(route => {
    const rows = [];
    for (const pool of route.pools) {
      for (const e of pool.endpoints) {
        const healthClass = e.health === 'healthy' ? 'ok' : e.health === 'unhealthy' ? 'bad' : 'dim';
        const breakerClass = e.breaker === 'CLOSED' ? 'ok' : e.breaker === 'OPEN' ? 'bad' : 'warn';
        rows.push(el('tr', {'data-endpoint': route.name + '/' + pool.role + '/' + e.name},
            el('td', {}, pool.role), el('td', {class: 'mono'}, e.name),
            el('td', {class: 'health ' + healthClass}, e.health),
            el('td', {class: 'breaker ' + breakerClass}, e.breaker.toLowerCase()),
            el('td', {class: 'num outstanding'}, e.outstanding),
            el('td', {class: 'dim'}, e.health === 'unhealthy' ? e.detail : (e.last_failure || ''))));
      }
    }
    return el('div', {class: 'route', 'data-route': route.name},
        el('h3', {}, route.name, ' ', el('span', {class: 'dim'},
            route.family + ' · model ' + route.model + ' · ' + route.styles.join(', ') + ' (default '
            + route.default_style + ') · lease ' + route.lease + ' · in flight ' + route.in_flight)),
        el('table', {}, el('thead', {}, el('tr', {}, ...['pool', 'endpoint', 'health', 'breaker', 'outstanding',
            'last failure'].map(h => el('th', {}, h)))), el('tbody', {}, ...rows)));
  }));
}

function drawLeases(leases) {
  replaceRows(document.querySelector('#leases tbody'), leases.map(s =>
      el('tr', {'data-session-id': s.session_id},
          el('td', {class: 'mono', title: s.session_id}, shortId(s.session_id)), el('td', {class: 'mono'}, s.request_id),
          el('td', {}, s.tenant), el('td', {}, s.route || s.model), el('td', {}, s.style), el('td', {class: 'state'}, s.state),
          el('td', {class: 'num'}, s.renewals), countdown(s.lease_ms_left))), 8, 'no live session');
}

function drawHeld(held) {
  replaceRows(document.querySelector('#held tbody'), held.map(s =>
      el('tr', {'data-session-id': s.session_id},
          el('td', {class: 'mono', title: s.session_id}, shortId(s.session_id)), el('td', {class: 'mono'}, s.request_id),
          el('td', {}, s.route || s.model), el('td', {class: 'state'}, s.state),
          el('td', {}, s.holds.map(h => h.endpoint + ' (' + h.resource + ', ' + h.status.toLowerCase() + ')')
              .join('; ')),
          s.released_by ? countdown(s.release_ms_left) : el('td', {class: 'dim'}, 'at its discharge'))),
      6, 'no engine holds KV for an ended session');
}

function drawHandoffs(handoffs) {
  replaceRows(document.querySelector('#handoffs tbody'), handoffs.map(h =>
      el('tr', {'data-request-id': h.request_id},
          el('td', {class: 'mono'}, h.request_id), el('td', {class: 'route-name'}, h.route), el('td', {}, h.style),
          el('td', {class: 'mono'}, h.prefill + ' → ' + h.decode),
          el('td', {class: 'state ' + (h.state === 'COMPLETE' ? 'ok' : 'bad')}, h.state),
          el('td', {class: 'num'}, duration(h.duration_ms)), el('td', {class: 'mono trace', title: h.trace_id},
              h.trace_id), el('td', {class: 'dim'}, new Date(h.ended_at).toLocaleTimeString()))),
      8, 'no handoff has ended on this replica yet');
}

function setStatus(status, text) {
  const node = document.getElementById('status');
  node.dataset.status = status;
  node.textContent = text;
}

async function poll() {
  try {
    const headers = key ? {authorization: 'Bearer ' + key} : {};
    const answer = await fetch(STATE, {headers, cache: 'no-store'});
    if (answer.status === 401 || answer.status === 403) {
      document.getElementById('key-form').hidden = false;
      document.getElementById('key-error').textContent = key ? 'that key is not an admin key' : '';
      setStatus('locked', 'admin key needed');
      return;
    }
    if (!answer.ok) {
      setStatus('error', 'the gateway answered ' + answer.status);
      return;
    }
    const state = await answer.json();
    receivedAt = performance.now();
    document.getElementById('key-form').hidden = true;
    document.getElementById('replica').textContent = state.replica;
    document.getElementById('updated').textContent = new Date().toLocaleTimeString();
    drawDrain(state.drain);
    drawByState(state.drain.sessions_by_state);
    drawRoutes(state.routes);
    drawLeases(state.leases);
    drawHeld(state.engine_held);
    drawHandoffs(state.handoffs);
    setStatus('live', 'live');
  } catch (e) {
    setStatus('error', 'gateway unreachable');
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

document.getElementById('key-form').addEventListener('submit', event => {
  event.preventDefault();
  key = document.getElementById('key').value.trim();
  sessionStorage.setItem('handoff-admin-key', key);
});
setInterval(() => document.querySelectorAll('.countdown').forEach(tick), 250);
poll();
