/** A minimal SMTP server on 127.0.0.1 that keeps every message it is given (enough for nodemailer). */
export function smtpSink() {
  const messages: { from: string; to: string[]; data: string }[] = [];
  const server = Bun.listen<{ buffer: string; inData: boolean; from: string; to: string[] }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { buffer: "", inData: false, from: "", to: [] };
        socket.write("220 sink ESMTP\r\n");
      },
      data(socket, chunk) {
        const state = socket.data;
        state.buffer += new TextDecoder().decode(chunk);
        for (;;) {
          if (state.inData) {
            const end = state.buffer.indexOf("\r\n.\r\n");
            if (end < 0) return;
            messages.push({ from: state.from, to: state.to, data: state.buffer.slice(0, end) });
            state.buffer = state.buffer.slice(end + 5);
            state.inData = false;
            state.to = [];
            socket.write("250 queued\r\n");
            continue;
          }
          const eol = state.buffer.indexOf("\r\n");
          if (eol < 0) return;
          const line = state.buffer.slice(0, eol);
          state.buffer = state.buffer.slice(eol + 2);
          const verb = line.slice(0, 4).toUpperCase();
          if (verb === "EHLO" || verb === "HELO") socket.write("250 sink\r\n");
          else if (verb === "MAIL") {
            state.from = line.slice(10).trim();
            socket.write("250 ok\r\n");
          } else if (verb === "RCPT") {
            state.to.push(line.slice(8).trim());
            socket.write("250 ok\r\n");
          } else if (verb === "DATA") {
            state.inData = true;
            socket.write("354 go\r\n");
          } else if (verb === "QUIT") {
            socket.write("221 bye\r\n");
            socket.end();
          } else socket.write("250 ok\r\n");
        }
      },
    },
  });
  return { messages, url: `smtp://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
