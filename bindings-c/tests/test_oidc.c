/*
 * C servers and C machine clients behind a real OpenID provider: oidc-provider (the certified
 * OpenID provider, pinned in tests/oidc; bindings-c/tests/run.sh installs it there with npm ci
 * and names its script in MCPAXLE_OIDC_PROVIDER) on loopback, as a child process. Shown:
 * - a server checks the provider's JWT access tokens with the built-in `jwt` verifier and its
 *   opaque tokens by introspection (no verify callback), and refuses a tampered token;
 * - clients get their own tokens with the client credentials grant, with a secret and with
 *   private_key_jwt (the provider holds only the public key), discovered from the server's
 *   401; a wrong secret fails with the provider's error;
 * - a token store written in C (mcpaxle_client_options_set_token_store): a second client with
 *   the same store calls without a new token, a stored token the server rejects is replaced,
 *   and a store that fails fails the call with its message.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

/* ---- the provider --------------------------------------------------------------------------- */

static pid_t provider_pid;
static int provider_out = -1;
static uint16_t provider_port;
static char *issuer;
static char *client_key; /* the PEM private key of the private_key_jwt client ci-key-job */

/* Standard base64 (with padding) decoded into a string the caller frees. */
static char *base64_decode(const char *in) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in), used = 0;
    char *out = calloc(n / 4 * 3 + 4, 1);
    unsigned bits = 0, count = 0;
    for (size_t i = 0; i < n && in[i] != '='; i++) {
        const char *at = strchr(alphabet, in[i]);
        if (!at || !in[i]) continue;
        bits = (bits << 6) | (unsigned)(at - alphabet);
        if (++count == 4) {
            out[used++] = (char)(bits >> 16), out[used++] = (char)(bits >> 8), out[used++] = (char)bits;
            bits = count = 0;
        }
    }
    if (count == 3) out[used++] = (char)(bits >> 10), out[used++] = (char)(bits >> 2);
    if (count == 2) out[used++] = (char)(bits >> 4);
    return out;
}

/* Starts the provider on `provider_port` (chosen at the first start) signing with key `kid`. */
static bool start_provider(const char *kid) {
    const char *script = getenv("MCPAXLE_OIDC_PROVIDER");
    if (!script || access(script, R_OK) != 0) {
        fprintf(stderr, "  MCPAXLE_OIDC_PROVIDER is not a readable script (run bindings-c/tests/run.sh, which installs it)\n");
        return false;
    }
    int fds[2];
    if (pipe(fds) != 0) return false;
    if (!provider_port) provider_port = free_port();
    char port[16];
    snprintf(port, sizeof port, "%u", (unsigned)provider_port);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"node", (char *)script, port, (char *)kid, NULL};
    extern char **environ;
    int rc = posix_spawnp(&provider_pid, "node", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        fprintf(stderr, "  node could not be started: %s\n", strerror(rc));
        close(fds[0]);
        return false;
    }
    provider_out = fds[0];
    char *key_line = read_line_fd(provider_out), *ready = read_line_fd(provider_out);
    free(issuer), free(client_key), client_key = NULL;
    issuer = fmt("http://127.0.0.1:%u", (unsigned)provider_port);
    char *want = fmt("ready %s", issuer);
    bool ok = strncmp(key_line, "client-key ", 11) == 0 && strcmp(ready, want) == 0;
    if (ok) client_key = base64_decode(key_line + 11);
    else fprintf(stderr, "  oidc-provider did not start: %s / %s\n", key_line, ready);
    free(key_line), free(ready), free(want);
    return ok;
}

static void stop_provider(void) {
    if (provider_pid > 0) {
        kill(provider_pid, SIGTERM);
        waitpid(provider_pid, NULL, 0);
        provider_pid = 0;
    }
    if (provider_out >= 0) close(provider_out), provider_out = -1;
}

/* POSTs the form `body` to the provider's `path` as the client ci-job (client_secret_basic);
 * the response body (free it), NULL unless 200. */
static char *provider_form(const char *path, const char *body) {
    struct http_response r = http_request(provider_port, "POST", path,
                                          "Authorization: Basic Y2ktam9iOmNpLXNlY3JldA==\r\n"
                                          "Content-Type: application/x-www-form-urlencoded\r\n",
                                          body);
    char *out = r.status == 200 ? r.body : NULL;
    if (out) r.body = NULL;
    http_response_free(&r);
    return out;
}

/* `text` percent-encoded for a form or a query (free it). */
static char *form_encode(const char *text) {
    char *out = calloc(strlen(text) * 3 + 1, 1), *o = out;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (isalnum(*c) || strchr("-._~", *c)) *o++ = (char)*c;
        else o += sprintf(o, "%%%02X", *c);
    }
    return out;
}

/* A client credentials token of ci-job for `resource` (free it), or NULL. */
static char *provider_token(const char *resource) {
    char *q = form_encode(resource);
    char *body = fmt("grant_type=client_credentials&scope=mcp%%3Atools&resource=%s", q);
    char *answer = provider_form("/token", body), *token = answer ? json_text(answer, "/access_token") : NULL;
    free(body), free(answer), free(q);
    return token;
}

/* The status of a tools/call of whoami sent to the server on `port` with `token`. */
static int status_with(uint16_t port, const char *path, const char *token) {
    char *headers = fmt("Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                        "Mcp-Method: tools/call\r\nMcp-Name: whoami\r\n",
                        token);
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\","
                       "\"arguments\":{},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                       "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"c\",\"version\":\"1\"},"
                       "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
    struct http_response r = http_request(port, "POST", path, headers, body);
    int status = r.status;
    http_response_free(&r), free(headers);
    return status;
}

/* ---- a protected server --------------------------------------------------------------------- */

/* "PRINCIPAL via CLIENT_ID for AUDIENCE", from the verified token's claims. */
static void whoami(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *info = NULL;
    mcpaxle_context_info(ctx, &info);
    char *principal = json_text(info, "/principal"), *client = json_text(info, "/claims/client_id");
    char *aud = json_text(info, "/claims/aud");
    char *text = fmt("%s via %s for %s", principal ? principal : "?", client ? client : "?", aud ? aud : "?");
    reply_text(c, text);
    free(text), free(principal), free(client), free(aud), mcpaxle_string_free(info);
}

struct protected {
    mcpaxle_server *server;
    mcpaxle_http_server *http;
    uint16_t port;
    char *url;
};

/* A server at `path` whose tokens (with the scope mcp:tools) the built-in `verifier` ("jwt" or
 * "introspection") checks. */
static struct protected protect(const char *path, const char *verifier) {
    struct protected p = {.server = new_server(NULL), .port = free_port()};
    p.url = fmt("http://127.0.0.1:%u%s", (unsigned)p.port, path);
    CHECK_RC(mcpaxle_server_add_tool(p.server, "{\"name\":\"whoami\",\"inputSchema\":{\"type\":\"object\"}}", whoami, NULL),
             MCPAXLE_OK);
    char *auth = fmt("{\"resource\":\"%s\",\"authorizationServers\":[\"%s\"],\"requiredScopes\":[\"mcp:tools\"],\"%s\":%s}",
                     p.url, issuer, verifier,
                     strcmp(verifier, "jwt") == 0 ? "{}" : "{\"clientId\":\"mcp-server\",\"clientSecret\":\"mcp-server-secret\",\"cacheMs\":0}");
    CHECK_RC(mcpaxle_server_set_bearer_auth(p.server, auth, NULL, NULL), MCPAXLE_OK);
    free(auth);
    char *listen = fmt("127.0.0.1:%u", (unsigned)p.port), *options = fmt("{\"path\":\"%s\"}", path);
    if (mcpaxle_http_server_start(p.server, listen, options, &p.http) != MCPAXLE_OK) {
        fprintf(stderr, "mcpaxle_http_server_start: %s\n", mcpaxle_last_error_message());
        abort();
    }
    free(listen), free(options);
    return p;
}

static void unprotect(struct protected *p) {
    mcpaxle_http_server_free(p->http);
    mcpaxle_server_free(p->server);
    free(p->url);
}

/* A client of `url` with `oauth_json`, the user-agent step `authorize` (with `browser`) and
 * `store` (with `ud`), each when not NULL; NULL when connecting failed, with the reason in
 * mcpaxle_last_error_message(). */
static mcpaxle_client *oauth_client(const char *url, const char *oauth_json, mcpaxle_authorization_handler authorize,
                                    void *browser, mcpaxle_input_handler store, void *ud) {
    mcpaxle_client_options *o = NULL;
    CHECK_RC(mcpaxle_client_options_new("c-machine", "1.0", NULL, &o), MCPAXLE_OK);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, oauth_json, authorize, browser), MCPAXLE_OK);
    if (store) CHECK_RC(mcpaxle_client_options_set_token_store(o, store, ud), MCPAXLE_OK);
    mcpaxle_client *c = NULL;
    mcpaxle_result rc = mcpaxle_client_connect_http(url, o, &c);
    mcpaxle_client_options_free(o);
    return rc == MCPAXLE_OK ? c : NULL;
}

/* A machine client (no user-agent step). */
static mcpaxle_client *machine_client(const char *url, const char *oauth_json, mcpaxle_input_handler store, void *ud) {
    return oauth_client(url, oauth_json, NULL, NULL, store, ud);
}

/* The text whoami answers, or NULL (the reason in mcpaxle_last_error_message()). */
static char *call_whoami(mcpaxle_client *c) {
    char *out = NULL, *text = NULL;
    if (mcpaxle_client_call_tool(c, "whoami", "{}", NULL, &out) == MCPAXLE_OK) text = json_text(out, "/content/0/text");
    mcpaxle_string_free(out);
    return text;
}

/* Connects a machine client with `oauth_json` (and `store`), calls whoami, and checks that it
 * answers `want`. */
static void check_whoami(const char *url, const char *oauth_json, mcpaxle_input_handler store, void *ud, const char *want) {
    mcpaxle_client *c = machine_client(url, oauth_json, store, ud);
    char *text = c ? call_whoami(c) : NULL;
    CHECK_STR(text, want);
    free(text);
    if (c) mcpaxle_client_free(c);
}

#define SECRET_CLIENT "{\"grantType\":\"client_credentials\",\"clientId\":\"ci-job\",\"clientSecret\":\"ci-secret\"}"

/* ---- the token store ------------------------------------------------------------------------ */

/* A token store of the application's own, in memory: one entry per key (its JSON text). */
struct store {
    pthread_mutex_t lock;
    char *keys[4], *tokens[4];
    atomic_int loads, saves, clears;
    bool broken;
};

static int store_find(struct store *s, const char *key) {
    for (int i = 0; i < 4; i++)
        if (s->keys[i] && strcmp(s->keys[i], key) == 0) return i;
    return -1;
}

static void store_put(struct store *s, const char *key, const char *token) {
    int i = store_find(s, key);
    for (int j = 0; i < 0 && j < 4; j++)
        if (!s->keys[j]) i = j, s->keys[j] = strdup(key);
    if (i < 0) return;
    free(s->tokens[i]);
    s->tokens[i] = token ? strdup(token) : NULL;
    if (!token) free(s->keys[i]), s->keys[i] = NULL;
}

static void store_op(void *ud, const char *request, mcpaxle_reply *reply) {
    struct store *s = ud;
    if (s->broken) {
        mcpaxle_reply_error(reply, MCPAXLE_ERR_TRANSPORT, "the keychain is locked");
        return;
    }
    char *op = json_text(request, "/op"), *key = json_value(request, "/key"), *token = json_value(request, "/token");
    pthread_mutex_lock(&s->lock);
    if (op && strcmp(op, "load") == 0) {
        atomic_fetch_add(&s->loads, 1);
        int i = store_find(s, key);
        mcpaxle_reply_ok(reply, i >= 0 && s->tokens[i] ? s->tokens[i] : "null");
    } else {
        bool save = op && strcmp(op, "save") == 0;
        atomic_fetch_add(save ? &s->saves : &s->clears, 1);
        store_put(s, key, save ? token : NULL);
        mcpaxle_reply_ok(reply, "null");
    }
    pthread_mutex_unlock(&s->lock);
    free(op), free(key), free(token);
}

static void store_free(struct store *s) {
    for (int i = 0; i < 4; i++) free(s->keys[i]), free(s->tokens[i]);
    pthread_mutex_destroy(&s->lock);
}

/* The stored access token of the only entry (a copy), or NULL. */
static char *stored_access_token(struct store *s) {
    pthread_mutex_lock(&s->lock);
    char *t = s->tokens[0] ? json_text(s->tokens[0], "/accessToken") : NULL;
    pthread_mutex_unlock(&s->lock);
    return t;
}

/* ---- the tests ------------------------------------------------------------------------------ */

TEST(machine_clients_call_a_server_checking_the_providers_jwts) {
    struct protected p = protect("/mcp", "jwt");
    char *want = fmt("ci-job via ci-job for %s", p.url);
    check_whoami(p.url, SECRET_CLIENT, NULL, NULL, want);
    free(want);

    /* private_key_jwt: the client signs its assertion with a key the provider knows only the
     * public half of. */
    char *key = NULL;
    mcpaxle_json_quote(client_key, &key);
    char *oauth = fmt("{\"grantType\":\"client_credentials\",\"clientId\":\"ci-key-job\",\"privateKeyPem\":%s,"
                      "\"signingAlgorithm\":\"ES256\"}",
                      key);
    want = fmt("ci-key-job via ci-key-job for %s", p.url);
    check_whoami(p.url, oauth, NULL, NULL, want);
    free(want), free(oauth), mcpaxle_string_free(key);

    /* A wrong secret: the provider's error, named. */
    mcpaxle_client *c = machine_client(p.url, "{\"grantType\":\"client_credentials\",\"clientId\":\"ci-job\",\"clientSecret\":\"nope\"}", NULL, NULL);
    char *text = c ? call_whoami(c) : NULL;
    CHECK(text == NULL);
    CHECK(strstr(mcpaxle_last_error_message(), "invalid_client") != NULL);
    if (text == NULL) printf("  a wrong secret: %s\n", mcpaxle_last_error_message());
    free(text);
    if (c) mcpaxle_client_free(c);
    unprotect(&p);
}

TEST(the_built_in_verifiers_refuse_what_they_must) {
    struct protected p = protect("/mcp", "jwt");
    char *token = provider_token(p.url), *elsewhere = provider_token("http://127.0.0.1/other/mcp");
    CHECK(token != NULL && elsewhere != NULL);
    if (token && elsewhere) {
        CHECK(status_with(p.port, "/mcp", token) == 200);
        /* Issued for another resource (RFC 8707 audience): refused. */
        CHECK(status_with(p.port, "/mcp", elsewhere) == 401);
        /* One signature character changed: refused. */
        char *tampered = strdup(token);
        size_t n = strlen(tampered);
        tampered[n - 2] = tampered[n - 2] == 'A' ? 'B' : 'A';
        CHECK(status_with(p.port, "/mcp", tampered) == 401);
        free(tampered);

        /* The provider rotates its signing key (restarted with a new key id): the server, not
         * restarted, fetches the new key set when a token names the new key; the old key's
         * tokens no longer pass. */
        stop_provider();
        CHECK(start_provider("k2"));
        char *rotated = provider_token(p.url);
        CHECK(rotated != NULL);
        if (rotated) CHECK(status_with(p.port, "/mcp", rotated) == 200);
        CHECK(status_with(p.port, "/mcp", token) == 401);
        free(rotated);
    }
    free(token), free(elsewhere);
    unprotect(&p);

    /* Opaque tokens (the provider issues them for /opaque) are checked at its introspection
     * endpoint; a revoked one is refused at once (cacheMs 0). */
    p = protect("/opaque", "introspection");
    char *want = fmt("ci-job via ci-job for %s", p.url);
    check_whoami(p.url, SECRET_CLIENT, NULL, NULL, want);
    free(want);
    token = provider_token(p.url);
    CHECK(token != NULL && strchr(token, '.') == NULL);
    if (token) {
        CHECK(status_with(p.port, "/opaque", token) == 200);
        char *body = fmt("token=%s", token), *answer = provider_form("/token/revocation", body);
        CHECK(answer != NULL);
        CHECK(status_with(p.port, "/opaque", token) == 401);
        free(body), free(answer);
    }
    free(token);
    unprotect(&p);
}

/* ---- a user's authorization, the browser step in C ------------------------------------------ */

#define REDIRECT_URI "http://127.0.0.1:8765/callback"

/* The cookies a browser keeps between the provider's pages (name=value each). */
struct jar {
    char *cookies[16];
};

/* Keeps the cookies `r` sets; forgets those it expires. */
static void jar_update(struct jar *j, const struct http_response *r) {
    for (const char *line = r->head; line && *line;) {
        if (strncasecmp(line, "Set-Cookie:", 11) == 0) {
            const char *v = line + 11;
            while (*v == ' ') v++;
            char *pair = strndup(v, strcspn(v, ";\r\n")), *eq = strchr(pair, '=');
            char *rest = strndup(v, strcspn(v, "\r\n"));
            bool expired = eq && (eq[1] == '\0' || strstr(rest, "1970") != NULL);
            size_t name_len = eq ? (size_t)(eq - pair) + 1 : strlen(pair);
            int slot = -1;
            for (int i = 0; i < 16; i++) {
                if (j->cookies[i] && strncmp(j->cookies[i], pair, name_len) == 0) {
                    free(j->cookies[i]), j->cookies[i] = NULL, slot = i;
                }
            }
            for (int i = 0; slot < 0 && i < 16; i++)
                if (!j->cookies[i]) slot = i;
            if (!expired && slot >= 0) j->cookies[slot] = pair, pair = NULL;
            free(pair), free(rest);
        }
        line = strstr(line, "\r\n");
        if (line) line += 2;
    }
}

/* The request headers for the jar's cookies (free it). */
static char *jar_header(const struct jar *j) {
    char *out = strdup("");
    for (int i = 0; i < 16; i++) {
        if (!j->cookies[i]) continue;
        char *next = fmt("%s%s%s", out, out[0] ? "; " : "", j->cookies[i]);
        free(out), out = next;
    }
    char *h = out[0] ? fmt("Cookie: %s\r\n", out) : strdup("");
    free(out);
    return h;
}

struct browser {
    const char *account;
    atomic_int visits;
};

/* The user's side of the authorization code flow: follows the provider's redirects with a
 * cookie jar, logs in as the account and approves the consent on the provider's pages
 * (tests/oidc/provider.mjs answers them as JSON), and replies with the redirect to
 * REDIRECT_URI, which nobody serves. */
static void walk(void *ud, const char *authorization_url, mcpaxle_reply *reply) {
    struct browser *b = ud;
    atomic_fetch_add(&b->visits, 1);
    struct jar jar = {0};
    char *url = strdup(authorization_url), *form = NULL, *redirect = NULL;
    for (int step = 0; step < 12 && !redirect; step++) {
        const char *path = strncmp(url, issuer, strlen(issuer)) == 0 ? url + strlen(issuer) : NULL;
        if (!path) break;
        char *cookies = jar_header(&jar);
        char *headers = fmt("%s%s", cookies, form ? "Content-Type: application/x-www-form-urlencoded\r\n" : "");
        struct http_response r = http_request(provider_port, form ? "POST" : "GET", path, headers, form);
        free(cookies), free(headers), free(form), form = NULL;
        jar_update(&jar, &r);
        char *location = http_header(&r, "location");
        if ((r.status == 302 || r.status == 303) && location) {
            char *next = location[0] == '/' ? fmt("%s%s", issuer, location) : strdup(location);
            if (strncmp(next, REDIRECT_URI, strlen(REDIRECT_URI)) == 0) redirect = strdup(next);
            free(url), url = next;
        } else if (r.status == 200) {
            char *prompt = json_text(r.body, "/prompt");
            form = prompt && strcmp(prompt, "login") == 0 ? fmt("login=%s", b->account) : strdup("consent=approve");
            free(prompt);
        } else {
            free(location), http_response_free(&r);
            break;
        }
        free(location), http_response_free(&r);
    }
    if (redirect) mcpaxle_reply_redirect(reply, redirect);
    else mcpaxle_reply_error(reply, MCPAXLE_ERR_TRANSPORT, "the provider never redirected back");
    free(url), free(form), free(redirect);
    for (int i = 0; i < 16; i++) free(jar.cookies[i]);
}

TEST(a_user_authorizes_once_and_the_token_is_refreshed) {
    struct store s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct browser alice = {.account = "alice"};
    struct protected p = protect("/mcp", "jwt");
    /* No client id: the client registers itself (dynamic registration), and the store keeps
     * the registration with the tokens. */
    const char *oauth = "{\"redirectUri\":\"" REDIRECT_URI "\",\"clientName\":\"c-oidc-test\"}";
    mcpaxle_client *c = oauth_client(p.url, oauth, walk, &alice, store_op, &s);
    char *me = c ? call_whoami(c) : NULL;
    if (c) mcpaxle_client_free(c);
    pthread_mutex_lock(&s.lock);
    char *first = s.tokens[0] ? strdup(s.tokens[0]) : NULL;
    pthread_mutex_unlock(&s.lock);
    char *client_id = first ? json_text(first, "/registration/clientId") : NULL;
    char *want = fmt("alice via %s for %s", client_id ? client_id : "?", p.url);
    CHECK_STR(me, want);
    CHECK(atomic_load(&alice.visits) == 1);
    char *refresh = first ? json_text(first, "/refreshToken") : NULL;
    CHECK(refresh != NULL);

    /* Expired in the store: a new client refreshes it (no user, no registration), and the
     * provider's rotated refresh token replaces the old one. */
    if (first) {
        pthread_mutex_lock(&s.lock);
        free(s.tokens[0]), s.tokens[0] = overlay(first, "{\"expiresAt\":1}");
        pthread_mutex_unlock(&s.lock);
    }
    c = oauth_client(p.url, oauth, walk, &alice, store_op, &s);
    char *again = c ? call_whoami(c) : NULL;
    if (c) mcpaxle_client_free(c);
    CHECK_STR(again, want);
    CHECK(atomic_load(&alice.visits) == 1);
    pthread_mutex_lock(&s.lock);
    char *rotated = s.tokens[0] ? json_text(s.tokens[0], "/refreshToken") : NULL;
    pthread_mutex_unlock(&s.lock);
    CHECK(rotated && refresh && strcmp(rotated, refresh) != 0);
    free(me), free(again), free(first), free(client_id), free(want), free(refresh), free(rotated);
    unprotect(&p);
    store_free(&s);
}

TEST(a_token_store_written_in_c) {
    struct store s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct protected p = protect("/mcp", "jwt");
    char *want = fmt("ci-job via ci-job for %s", p.url);
    check_whoami(p.url, SECRET_CLIENT, store_op, &s, want);
    CHECK(atomic_load(&s.saves) == 1);
    char *key_issuer = s.keys[0] ? json_text(s.keys[0], "/issuer") : NULL;
    char *key_resource = s.keys[0] ? json_text(s.keys[0], "/resource") : NULL;
    char *key_client = s.keys[0] ? json_text(s.keys[0], "/client") : NULL;
    CHECK_STR(key_issuer, issuer);
    CHECK_STR(key_resource, p.url);
    CHECK_STR(key_client, "ci-job");
    free(key_issuer), free(key_resource), free(key_client);

    /* A second client (a restarted program) with the same store calls without a new token. */
    int loads = atomic_load(&s.loads);
    check_whoami(p.url, SECRET_CLIENT, store_op, &s, want);
    CHECK(atomic_load(&s.loads) > loads);
    CHECK(atomic_load(&s.saves) == 1);

    /* A stored token the server rejects is dropped and replaced, once. */
    pthread_mutex_lock(&s.lock);
    char *forged = fmt("{\"accessToken\":\"forged\",\"expiresAt\":%ld,\"scopes\":[]}", (long)time(NULL) + 3600);
    free(s.tokens[0]), s.tokens[0] = forged;
    pthread_mutex_unlock(&s.lock);
    check_whoami(p.url, SECRET_CLIENT, store_op, &s, want);
    char *token = stored_access_token(&s);
    CHECK(token && strcmp(token, "forged") != 0);
    free(token);

    /* A store that fails fails the call with its message. */
    struct store broken = {.lock = PTHREAD_MUTEX_INITIALIZER, .broken = true};
    mcpaxle_client *c = machine_client(p.url, SECRET_CLIENT, store_op, &broken);
    char *text = c ? call_whoami(c) : NULL;
    CHECK(text == NULL);
    CHECK(strstr(mcpaxle_last_error_message(), "the keychain is locked") != NULL);
    free(text);
    if (c) mcpaxle_client_free(c);
    store_free(&broken);
    free(want);
    unprotect(&p);
    store_free(&s);
}

int main(void) {
    if (!start_provider("k1")) {
        stop_provider();
        free(issuer), free(client_key);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    RUN(machine_clients_call_a_server_checking_the_providers_jwts);
    RUN(a_token_store_written_in_c);
    RUN(a_user_authorizes_once_and_the_token_is_refreshed);
    RUN(the_built_in_verifiers_refuse_what_they_must); /* last: it rotates the provider's key */
    stop_provider();
    free(issuer), free(client_key);
    return summary();
}
