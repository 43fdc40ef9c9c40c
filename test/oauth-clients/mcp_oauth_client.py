"""An MCP client built only from the official Python SDK (`mcp`), connecting
to a Leasehold hub through the SDK's own OAuth client (OAuthClientProvider,
dynamic client registration, PKCE) the way any Python agent would.

The person's part of the flow (signing in and consenting in the browser)
belongs to the test that runs this script: the script prints the
authorization URL as a JSON line and waits for the browser to arrive at its
loopback redirect URI (RFC 8252 section 7.3), served here on 127.0.0.1.

Everything the script reports goes to stdout as one JSON object per line:
  {"event": "callback", "redirect_uri": ...}     the loopback redirect URI
  {"event": "authorize", "url": ..., "n": 1}      open this in the browser
  {"event": "http", "line": ...}                  one HTTP exchange (transcript)
  {"event": "tools", "names": [...]}
  {"event": "call", "name": ..., "is_error": ..., "structured": ..., "text": ...}
  {"event": "refused", "name": ..., "error": ...}  a tool call that raised
  {"event": "step_up_declined", "n": 2}           the SDK asked for more scope (after a 403); declined
                                                  (in mcp 2.3.0 that ends the client session: "refused")
  {"event": "done"} or {"event": "error", "message": ...}
Secrets (codes, tokens, verifiers) are never printed whole: only their
prefix and length, which is what the transcript needs to show their shape.
"""

import argparse
import asyncio
import json
import sys
import traceback
import uuid
from urllib.parse import parse_qs, urlsplit

import httpx2

from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


def leaves(error: BaseException) -> list[BaseException]:
    """The real failures inside anyio's task-group wrappers."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def emit(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, **fields}, default=str), flush=True)


def shape(secret: object) -> str:
    """`lha_…(36 chars)`: enough to show which kind of credential, never usable."""
    text = str(secret)
    return f"{text[:4]}…({len(text)} chars)"


class StepUpDeclined(Exception):
    """Raised inside the SDK's auth flow when it asks for more scope than was granted."""


class MemoryTokenStorage(TokenStorage):
    """In memory only: each run of the script is a new client with nothing remembered."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class LoopbackCallback:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization redirect."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{self.port}/callback"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            parts = request_line.split(" ")
            target = urlsplit(parts[1]) if len(parts) >= 2 else urlsplit("/")
            if target.path != "/callback":
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            params = {k: v[0] for k, v in parse_qs(target.query).items()}
            body = b"Leasehold e2e: authorization received; this window may be closed.\n"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
            await self.queue.put(params)
        finally:
            await writer.drain()
            writer.close()

    async def wait(self) -> dict[str, str]:
        return await self.queue.get()


def describe_request(request: httpx2.Request) -> str:
    url = request.url
    line = f"{request.method} {url.path}"
    if request.method == "POST" and url.path.endswith("/api/mcp"):
        try:
            message = json.loads(request.content)
            line += f"  [{message.get('method', 'response')}" + (f" {message['params'].get('name')}" if message.get("method") == "tools/call" else "") + "]"
        except Exception:  # noqa: BLE001 - a body that is not one JSON-RPC message is still worth a line
            pass
    elif request.method == "POST" and url.path.endswith("/token"):
        form = parse_qs(request.content.decode())
        line += f"  grant_type={form.get('grant_type', ['?'])[0]} resource={form.get('resource', ['-'])[0]}"
        if "code_verifier" in form:
            line += f" code_verifier={shape(form['code_verifier'][0])}"
    auth = request.headers.get("authorization")
    if auth:
        line += f"  (Authorization: Bearer {shape(auth.removeprefix('Bearer '))})"
    return line


async def describe_response(response: httpx2.Response) -> str:
    line = f"-> {response.status_code}"
    www = response.headers.get("www-authenticate")
    if www:
        line += f"  WWW-Authenticate: {www}"
    path = response.request.url.path
    if "/.well-known/" in path or path.endswith("/register") or path.endswith("/token"):
        await response.aread()
        try:
            body = response.json()
        except Exception:  # noqa: BLE001
            body = None
        if isinstance(body, dict):
            if path.endswith("/token"):
                summary = {k: (shape(v) if k in ("access_token", "refresh_token") else v) for k, v in body.items()}
            elif path.endswith("/register"):
                summary = {k: body.get(k) for k in ("client_id", "client_name", "redirect_uris", "token_endpoint_auth_method", "scope") if k in body}
            elif "oauth-protected-resource" in path:
                summary = {k: body.get(k) for k in ("resource", "authorization_servers", "scopes_supported") if k in body}
            else:
                summary = {k: body.get(k) for k in ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint", "code_challenge_methods_supported", "client_id_metadata_document_supported") if k in body}
            line += f"  {json.dumps(summary, ensure_ascii=False)}"
    return line


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True, help="the hub's MCP URL, e.g. http://127.0.0.1:8700/api/mcp")
    parser.add_argument("--client-name", default="Leasehold e2e (Python SDK)")
    parser.add_argument("--command", default="echo hi", help="run_command's command on host local")
    parser.add_argument("--try-mutating", action="store_true", help="call run_command even if tools/list lacks it (a read-only token must be refused)")
    args = parser.parse_args()

    callback = LoopbackCallback()
    redirect_uri = await callback.start()
    emit("callback", redirect_uri=redirect_uri)
    authorize_count = 0

    async def redirect_handler(url: str) -> None:
        nonlocal authorize_count
        authorize_count += 1
        query = parse_qs(urlsplit(url).query)
        emit("authorize", url=url, n=authorize_count, scope=query.get("scope", [""])[0], resource=query.get("resource", [""])[0], code_challenge_method=query.get("code_challenge_method", [""])[0])

    async def callback_handler() -> AuthorizationCodeResult:
        if authorize_count > 1:
            # A second authorization is the SDK's scope step-up after a 403 insufficient_scope: this
            # client declines it, so the call that needed more scope fails as the hub decided.
            emit("step_up_declined", n=authorize_count)
            raise StepUpDeclined("step-up authorization declined by the test client")
        params = await callback.wait()
        if "error" in params:
            emit("http", line=f"(browser) redirect to {redirect_uri} with error={params['error']}")
            raise RuntimeError(f"authorization refused: {params['error']}")
        emit("http", line=f"(browser) redirect to {redirect_uri} code={shape(params.get('code', ''))} state=… iss={params.get('iss')}")
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    provider = OAuthClientProvider(
        server_url=args.server,
        client_metadata=OAuthClientMetadata(
            client_name=args.client_name,
            redirect_uris=[redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryTokenStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )

    async def on_request(request: httpx2.Request) -> None:
        emit("http", line=describe_request(request))

    async def on_response(response: httpx2.Response) -> None:
        emit("http", line=await describe_response(response))

    http_client = create_mcp_http_client(auth=provider)
    http_client.event_hooks = {"request": [on_request], "response": [on_response]}
    calling = False
    async with http_client:
        try:
            async with Client(streamable_http_client(args.server, http_client=http_client), client_info=None) as client:
                tools = await client.list_tools()
                names = sorted(t.name for t in tools.tools)
                emit("tools", names=names)
                if "run_command" in names or args.try_mutating:
                    call = {"host": "local", "command": args.command, "idempotency_key": str(uuid.uuid4())}
                    calling = True
                    try:
                        result = await client.call_tool("run_command", call)
                        text = "\n".join(getattr(c, "text", "") for c in result.content)
                        emit("call", name="run_command", is_error=bool(result.is_error), structured=result.structured_content, text=text[:2000])
                    except Exception as error:  # noqa: BLE001 - the refusal itself is what the test checks
                        emit("refused", name="run_command", error="; ".join(f"{type(e).__name__}: {e}" for e in leaves(error))[:800])
                    calling = False
        except BaseException as error:  # noqa: BLE001
            # A failed step-up inside the SDK's HTTP auth flow ends the transport's task group, and with
            # it the whole client session (mcp 2.3.0): the call never returns, the session raises.
            if not (calling and any(isinstance(e, StepUpDeclined) for e in leaves(error))):
                raise
            emit("refused", name="run_command", error="403 insufficient_scope; the SDK's step-up authorization was declined, which ended the client session")
    emit("done")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except BaseException as error:  # noqa: BLE001 - report anything as one line the test can show
        if isinstance(error, SystemExit):
            raise
        # Bounded: an error that quotes a whole HTML page would bury the line that matters.
        emit("error", message="; ".join(f"{type(e).__name__}: {e}" for e in leaves(error))[:800], trace=traceback.format_exc()[-1500:])
        sys.exit(1)
