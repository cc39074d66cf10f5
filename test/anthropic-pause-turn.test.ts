/** The Anthropic adapter continues a `pause_turn` stop by sending the paused content back. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { createAnthropicProvider } from '../src/model-call/providers/anthropic-provider.js';

it('continues a paused turn and joins the parts; the second request carries the paused content', async () => {
  const bodies: { messages: { role: string; content: unknown }[] }[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      bodies.push(JSON.parse(text));
      const paused = bodies.length === 1;
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          id: `msg_${bodies.length}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: [{ type: 'text', text: paused ? 'first half, ' : 'second half' }],
          stop_reason: paused ? 'pause_turn' : 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const provider = createAnthropicProvider({
      apiKey: 'sk-ant-test',
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    const response = await provider.complete({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'research this' }],
      maxOutputTokens: 100,
    });
    expect(response.text).toBe('first half, second half');
    expect(response.finishReason).toBe('stop');
    expect(response.usage).toEqual({ inputTokens: 20, outputTokens: 10 });
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'first half, ' }],
    });
  } finally {
    server.close();
  }
});
