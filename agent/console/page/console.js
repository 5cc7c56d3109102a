// deskhand's console page. Everything the model or the desktop wrote
// (text, code, window titles, reasons) is put in the page with
// textContent only: a hostile model or screen is an attacker.
'use strict';

const $ = (id) => document.getElementById(id);
let csrf = '';
let role = 'observer';
let question = null;      // the open question's event, or null
let frameLoading = false;
let frameWanted = null;   // the newest frame event not yet loaded
let lastFrame = null;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = String(text);
  return e;
}

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Deskhand-CSRF': csrf },
    body: JSON.stringify(body),
  });
  if (!r.ok) {
    let why = r.status + '';
    try { why += ': ' + (await r.json()).error; } catch (e) { /* not JSON */ }
    $('q-who').textContent = 'refused (' + why + ')';
  }
  return r.ok;
}

// ---- the live screen ----------------------------------------------------

// Overlays move by transform only: no layout, so a watching browser costs little.
function place(node, x, y, f, extra) {
  if (!f || !f.sw || !f.sh) { node.hidden = true; return; }
  const img = $('screen');
  const px = x / f.sw * img.clientWidth, py = y / f.sh * img.clientHeight;
  node.style.transform = 'translate(' + px + 'px, ' + py + 'px)' + (extra || '');
  node.hidden = false;
}

function overlays() {
  place($('pointer'), lastFrame ? lastFrame.px : 0, lastFrame ? lastFrame.py : 0, lastFrame,
        ' rotate(-30deg)');
  for (let i = 0; i < 2; i++) {
    const t = question && question.targets ? question.targets[i] : null;
    if (t) place($('target' + i), t[0], t[1], lastFrame, ' translate(-12px, -12px)');
    else $('target' + i).hidden = true;
  }
}

function loadFrame() {
  if (frameLoading || !frameWanted) return;
  const f = frameWanted;
  frameWanted = null;
  if (lastFrame && lastFrame.seq === f.seq) { lastFrame = f; overlays(); return; }
  frameLoading = true;
  const img = $('screen');
  img.onload = () => {
    frameLoading = false;
    lastFrame = f;
    $('noscreen').hidden = true;
    img.dataset.seq = f.seq;
    img.dataset.loadedAt = Date.now(); // read by bench/console.py (frame latency)
    overlays();
    loadFrame();
  };
  img.onerror = () => { frameLoading = false; loadFrame(); };
  img.src = '/frame.png?seq=' + f.seq;
}

// ---- the timeline -------------------------------------------------------

function recordLine(r) {
  const li = el('li', 'ev-' + r.event);
  li.dataset.event = r.event;
  if (r.id) li.dataset.id = r.id;
  li.appendChild(el('span', 'ev-kind', r.event));
  const parts = [];
  if (r.id) parts.push(r.id);
  if (r.kind) parts.push(r.kind);
  if (r.by) parts.push('by ' + r.by);
  if (r.from) parts.push('from ' + r.from);
  if (r.reason) parts.push(r.reason);
  if (r.event === 'executed') parts.push('status ' + r.status + (r.error ? ': ' + r.error : ''));
  if (r.event === 'scanned' && r.findings) parts.push(r.findings.length + ' finding(s)');
  if (r.event === 'session') parts.push('session started');
  li.appendChild(el('span', 'ev-text', parts.join(' · ')));
  if (r.event === 'proposed') {
    const body = r.code !== undefined ? r.code : JSON.stringify(r.action, null, 1);
    li.appendChild(el('pre', 'ev-body', body));
  }
  if (r.event === 'scanned' && r.findings && r.findings.length) {
    li.appendChild(el('pre', 'ev-body', JSON.stringify(r.findings, null, 1)));
  }
  return li;
}

function timeline(ev) {
  let li;
  if (ev.type === 'audit') li = recordLine(ev.record);
  else if (ev.type === 'task') li = el('li', 'ev-task', 'Task: ' + ev.text);
  else if (ev.type === 'text') li = el('li', 'ev-model', 'Model: ' + ev.text);
  else if (ev.type === 'note') li = el('li', 'ev-note', ev.text);
  else if (ev.type === 'question') li = el('li', 'ev-question', 'Asked: ' + ev.question + ' (' + ev.id + ')');
  else if (ev.type === 'answered') li = el('li', 'ev-answered', 'Answered ' + ev.answer + ' by ' + ev.who);
  else if (ev.type === 'state') li = el('li', 'ev-state', 'Control: ' + ev.what);
  else if (ev.type === 'details') {
    li = el('li', 'ev-details', 'Details of ' + ev.id);
    li.appendChild(el('pre', 'ev-body', ev.text));
  }
  else return;
  li.dataset.type = ev.type;
  pending.appendChild(li);
  if (!flushing) { flushing = true; requestAnimationFrame(flush); }
}

// Timeline entries go into the page once per animation frame, in one piece:
// a busy agent costs the watching browser one layout a frame, not one an event.
const pending = document.createDocumentFragment();
let flushing = false;
function flush() {
  flushing = false;
  const box = document.querySelector('aside');
  const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  $('timeline').appendChild(pending);
  if (atEnd) box.scrollTop = box.scrollHeight;
}

// ---- questions and state ------------------------------------------------

function showQuestion(ev) {
  // Details asked for (d) stay beside the same proposal when it is asked again.
  if ($('question').dataset.id !== ev.id) $('q-details').textContent = '';
  $('question').dataset.id = ev.id;
  question = ev;
  $('question').hidden = false;
  $('question').dataset.qid = ev.qid;
  $('q-text').textContent = ev.question + ' (' + ev.id + ')';
  $('q-body').textContent = ev.edit !== undefined ? ev.edit : '';
  $('q-edit-text').value = ev.edit !== undefined ? ev.edit : '';
  $('q-edit').hidden = true;
  $('q-who').textContent = '';
  for (const k of ['y', 'n', 'e', 'd']) {
    $('q-' + k).hidden = ev.choices.indexOf(k) < 0 || (k === 'e' && ev.edit === undefined);
    $('q-' + k).disabled = false;
  }
  overlays();
}

function answered(ev) {
  if (!question || question.qid !== ev.qid) return;
  $('q-who').textContent = 'Answered ' + ev.answer + ' by ' + ev.who;
  for (const k of ['y', 'n', 'e', 'd']) $('q-' + k).disabled = true;
  $('q-edit').hidden = true;
  question = null;
  $('question').dataset.qid = '';
  overlays();
}

function state(ev) {
  $('runstate').textContent = ev.took_over ? 'taken over: the agent waits' :
    ev.paused ? 'paused' : ev.what === 'stop' ? 'stopped' : 'running';
}

function onEvent(ev) {
  timeline(ev);
  if (ev.type === 'question') showQuestion(ev);
  else if (ev.type === 'answered') answered(ev);
  else if (ev.type === 'state') state(ev);
  else if (ev.type === 'details' && $('question').dataset.id === ev.id)
    $('q-details').textContent = ev.text;
}

function answer(key, text) {
  if (!question) return;
  const body = { qid: question.qid, answer: key };
  if (text !== undefined) body.text = text;
  post('/api/answer', body);
}

function wire() {
  $('q-y').addEventListener('click', () => answer('y'));
  $('q-n').addEventListener('click', () => answer('n'));
  $('q-d').addEventListener('click', () => answer('d'));
  $('q-e').addEventListener('click', () => { $('q-edit').hidden = false; });
  $('q-edit-send').addEventListener('click', () => answer('e', $('q-edit-text').value));
  for (const a of ['pause', 'resume', 'takeover', 'stop'])
    $(a).addEventListener('click', () => post('/api/control', { action: a }));
  window.addEventListener('resize', overlays);
}

function connect() {
  const es = new EventSource('/api/events');
  es.addEventListener('open', () => { $('link').textContent = 'live'; });
  es.addEventListener('error', () => { $('link').textContent = 'reconnecting'; });
  const clear = () => { pending.textContent = ''; $('timeline').textContent = ''; };
  es.addEventListener('reset', clear);
  es.addEventListener('ev', (m) => onEvent(JSON.parse(m.data)));
  es.addEventListener('frame', (m) => { frameWanted = JSON.parse(m.data); loadFrame(); });
  // A reconnect replays the timeline from the start: begin empty.
  es.addEventListener('open', clear);
}

async function start() {
  const r = await fetch('/api/state', { credentials: 'same-origin' });
  if (!r.ok) { $('link').textContent = 'not signed in: open the link deskhand printed'; return; }
  const s = await r.json();
  csrf = s.csrf;
  role = s.role;
  $('role').textContent = role;
  document.body.classList.add(role);
  document.body.dataset.role = role;
  wire();
  connect();
}

start();
