import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServiceCall, ServiceRequest } from '../../src/core/run/editor/serviceProtocol';
import { ServiceBudgetError, ServiceError, ServiceLanes, type Lane, type LaneWorkerHandle } from '../../src/vscode/serviceLanes';

/** A fake worker: records the calls posted to it; the test answers them (or never does: a stuck template). */
class FakeWorker implements LaneWorkerHandle {
  calls: ServiceCall[] = [];
  terminated = false;
  message: (m: unknown) => void = () => {};
  private end: (why: string) => void = () => {};
  constructor(readonly lane: Lane) {}
  postMessage(m: ServiceCall): void {
    this.calls.push(m);
  }
  terminate(): void {
    this.terminated = true;
  }
  onMessage(l: (m: unknown) => void): void {
    this.message = l;
  }
  onEnd(l: (why: string) => void): void {
    this.end = l;
  }
  started(id: number): void {
    this.message({ type: 'started', id });
  }
  reply(id: number, result: unknown): void {
    this.message({ type: 'reply', id, result });
  }
  exit(code: number): void {
    this.end(`exited (code ${code})`);
  }
  /** The id of the call whose request has `op`. */
  idOf(op: ServiceRequest['op']): number {
    const c = this.calls.find((x) => x.request.op === op);
    assert.ok(c, `no ${op} call posted to this ${this.lane} worker`);
    return c.id;
  }
}

function lanes() {
  const workers: FakeWorker[] = [];
  const l = new ServiceLanes((lane) => {
    const w = new FakeWorker(lane);
    workers.push(w);
    return w;
  }, '; a very large row may have exhausted its heap');
  return { l, workers, of: (lane: Lane) => workers.filter((w) => w.lane === lane) };
}

const view = (line: number): ServiceRequest => ({
  op: 'view',
  row: { text: '{}', file: '/data/agent.jsonl', line },
  options: { mask: 'assistant', templateKwargs: {} },
});
const check: ServiceRequest = { op: 'checkTemplate', tokenizerDir: '/models/qwen', templateKwargs: {} };
const tick = () => new Promise((r) => setImmediate(r));

test('service lanes: a render past its budget ends only the render worker; a running template check is answered', async () => {
  const { l, of } = lanes();
  const render = l.call(view(3), 20);
  const checking = l.call(check, 60_000);
  const [rw] = of('render');
  const [tw] = of('template');
  assert.ok(rw && tw && rw !== tw, 'the render and the template check each get a worker');
  rw.started(rw.idOf('view'));
  tw.started(tw.idOf('checkTemplate'));
  await assert.rejects(render, (e: unknown) => {
    assert.ok(e instanceof ServiceBudgetError);
    assert.equal(e.message, 'rendering line 3 of agent.jsonl took longer than 0.0 s and was stopped');
    return true;
  });
  assert.equal(rw.terminated, true, 'the stuck render worker is terminated');
  assert.equal(tw.terminated, false, 'the template worker is not');
  tw.reply(tw.idOf('checkTemplate'), { prefixStable: true });
  assert.deepEqual(await checking, { prefixStable: true });
  assert.deepEqual(l.starts(), { render: 1, template: 1, background: 0 });
  // The view carries its budget to the worker (it stops itself between steps at the deadline).
  assert.equal((rw.calls[0].request as { budgetMs?: number }).budgetMs, 20);
});

test('service lanes: the other calls of an overrun lane are sent once again to a new worker; caught twice, they fail naming the work', async () => {
  const { l, of } = lanes();
  const stuck = l.call(view(1), 20);
  const other = l.call(view(2), 60_000);
  const [w1] = of('render');
  w1.started(w1.calls[0].id);
  await assert.rejects(stuck, ServiceBudgetError);
  await tick();
  const [, w2] = of('render');
  assert.ok(w2, 'a new render worker');
  assert.deepEqual(
    w2.calls.map((c) => (c.request as { row: { line: number } }).row.line),
    [2],
    'line 2 sent again',
  );
  // Line 2 overruns nothing itself, but a third call now overruns: line 2 was already sent again once, so it fails.
  const third = l.call(view(3), 20);
  w2.started(w2.calls[1].id);
  await assert.rejects(third, ServiceBudgetError);
  await assert.rejects(other, (e: unknown) => {
    assert.ok(e instanceof ServiceError);
    assert.equal(e.errorName, 'WorkerRestart');
    assert.match(e.message, /^rendering line 2 of agent\.jsonl was stopped twice by other work in its worker that ran past its budget: try again$/);
    return true;
  });
});

test("service lanes: the budget runs from the worker's started, not while the call waits", async () => {
  const { l, of } = lanes();
  const waiting = l.call(check, 20);
  const [tw] = of('template');
  await new Promise((r) => setTimeout(r, 60)); // longer than the budget, but the call has not started
  assert.equal(tw.terminated, false);
  tw.started(tw.idOf('checkTemplate'));
  tw.reply(tw.idOf('checkTemplate'), 'done');
  assert.equal(await waiting, 'done');
});

test('service lanes: a background call past its budget fails alone; its worker keeps serving the others', async () => {
  const { l, of } = lanes();
  const slow = l.call({ op: 'rowProblems', file: '/data/big.jsonl' }, 20);
  const stats = l.call({ op: 'stats', parts: [{ tokenizedData: '/out/data/tokenized_data.jsonl' }] });
  const [bw] = of('background');
  bw.started(bw.idOf('rowProblems'));
  await assert.rejects(slow, { message: 'checking the rows of big.jsonl took longer than 0.0 s and was stopped' });
  assert.equal(bw.terminated, false);
  bw.reply(bw.idOf('stats'), { records: 1 });
  assert.deepEqual(await stats, { records: 1 });
  assert.equal(of('background').length, 1);
});

test('service lanes: a worker that exits fails its pending calls with what they were and why; the next call starts a new one', async () => {
  const { l, of } = lanes();
  const pending = l.call(view(7), 30_000);
  const [w1] = of('render');
  w1.exit(134);
  await assert.rejects(pending, (e: unknown) => {
    assert.ok(e instanceof ServiceError);
    assert.equal(e.errorName, 'WorkerExit');
    assert.equal(
      e.message,
      'rendering line 7 of agent.jsonl was not answered: the render worker exited (code 134); a very large row may have exhausted its heap',
    );
    return true;
  });
  const next = l.call(view(8));
  const [, w2] = of('render');
  assert.ok(w2);
  w2.reply(w2.calls[0].id, 'ok');
  assert.equal(await next, 'ok');
});

test('service lanes: dispose fails pending calls and terminates the workers', async () => {
  const { l, of } = lanes();
  const p = l.call(check);
  l.dispose();
  await assert.rejects(p, { message: 'the extension is shutting down' });
  assert.equal(of('template')[0].terminated, true);
});

test('service lanes: a view that stops itself at its deadline ends alone, named like an overrun; its worker keeps serving', async () => {
  const { l, of } = lanes();
  const slow = l.call(view(12), 30_000);
  const next = l.call(view(13), 30_000);
  const [rw] = of('render');
  rw.started(rw.calls[0].id);
  // The worker's answer (service.ts DeadlineExceededError, by class name).
  rw.message({
    type: 'reply',
    id: rw.calls[0].id,
    error: { name: 'DeadlineExceededError', message: 'the row took longer than its time budget to render' },
  });
  await assert.rejects(slow, (e: unknown) => {
    assert.ok(e instanceof ServiceBudgetError);
    assert.equal(e.message, 'rendering line 12 of agent.jsonl took longer than 30.0 s and was stopped');
    return true;
  });
  assert.equal(rw.terminated, false, 'the worker stopped the call itself: it is not ended');
  rw.reply(rw.calls[1].id, 'line 13');
  assert.equal(await next, 'line 13');
  assert.equal(of('render').length, 1);
});
