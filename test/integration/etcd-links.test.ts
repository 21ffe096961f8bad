/**
 * The chaos run's links between Patroni and etcd (src/showcase/etcd-links.ts): a relay per node
 * on stack-ha.sh's port P+10N+2 to etcd's P+2. A cut is a partition as TCP sees it: bytes stop
 * both ways on open connections, which stay open, and a new connection is accepted and gets
 * nowhere; the heal closes everything that lived through the cut, and new connections reach
 * etcd again. Here "etcd" is an echo server on this file's own ports.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { EtcdLinks, etcdLinkPort } from '../../src/showcase/etcd-links.js';

const pgPort = Number(process.env.AMENDS_TEST_ETCD_LINK_PORT ?? 22432);
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function echoServer(port: number): Promise<Server> {
  const server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

interface Client {
  socket: Socket;
  received: () => string;
  closed: () => boolean;
}

async function connect(port: number): Promise<Client> {
  const socket = createConnection(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('utf8');
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  cleanups.push(() => {
    socket.destroy();
  });
  return { socket, received: () => received, closed: () => closed };
}

describe('the links between Patroni and etcd', () => {
  it('relay, then drop everything while cut without closing, then close what lived through the cut', async () => {
    await echoServer(pgPort + 2);
    const links = await EtcdLinks.start(pgPort, [1, 2]);
    cleanups.push(() => links.close());
    const before = await connect(etcdLinkPort(pgPort, 1));
    const other = await connect(etcdLinkPort(pgPort, 2));
    before.socket.write('one');
    await sleep(100);
    expect(before.received()).toBe('one');

    links.cut(1);
    before.socket.write('two');
    other.socket.write('other');
    const during = await connect(etcdLinkPort(pgPort, 1));
    during.socket.write('three');
    await sleep(300);
    expect([before.received(), during.received(), before.closed(), during.closed()]).toEqual(['one', '', false, false]);
    // Node 2's link is not cut.
    expect(other.received()).toBe('other');

    links.heal(1);
    await sleep(100);
    expect([before.closed(), during.closed(), other.closed()]).toEqual([true, true, false]);
    const after = await connect(etcdLinkPort(pgPort, 1));
    after.socket.write('four');
    await sleep(100);
    expect(after.received()).toBe('four');
  });
});
