// A server on the host's loopback for the network tests (test/cli/net.test.ts,
// test/helper/net.test.ts): what a command in a network namespace must not reach.
import {createServer, type AddressInfo} from 'node:net'

/** A TCP server on 127.0.0.1 that answers "reached" (as HTTP/1.0) and counts who came; closed by the caller through `servers`. */
export async function hostServer(servers: Array<{close(): unknown}>): Promise<{port: number; connections: () => number}> {
  let count = 0
  const server = createServer(socket => {
    count++
    socket.end('HTTP/1.0 200 OK\r\n\r\nreached\n')
  })
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {port: (server.address() as AddressInfo).port, connections: () => count}
}
