// The gateways' HTTP API as the bench uses it: create device tokens, publish a frame to an
// account. Keep-alive connections so publishing measures the gateway, not TCP setup.
"use strict";

const http = require("node:http");

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function request(baseUrl, adminKey, method, path, body) {
  const url = new URL(path, baseUrl);
  const payload = body === undefined ? null : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${adminKey}`,
          "content-type": "application/json",
          ...(payload ? { "content-length": Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (data += c));
        res.on("end", () => {
          if (res.statusCode >= 300) return reject(new Error(`${method} ${path}: ${res.statusCode} ${data}`));
          resolve(data ? JSON.parse(data) : null);
        });
      }
    );
    req.on("error", reject);
    if (payload) req.write(payload);
    req.end();
  });
}

async function createTokens(baseUrl, adminKey, account, count) {
  const { tokens } = await request(baseUrl, adminKey, "POST", "/tokens", { account, count });
  return tokens;
}

function publish(baseUrl, adminKey, account, body) {
  return request(baseUrl, adminKey, "POST", `/accounts/${encodeURIComponent(account)}/messages`, body);
}

module.exports = { createTokens, publish };
