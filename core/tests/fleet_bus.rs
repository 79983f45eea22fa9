//! Instances of a fleet share their change announcements through a real Redis
//! (`redis-server`, the Debian package installed pinned by scripts/debian-tool.sh, started and
//! stopped here on 127.0.0.1): a listen stream on one instance hears a change made on another;
//! with Redis down local delivery goes on; once Redis is back every listener is told that its
//! lists may have changed, and changes cross again.

mod redis_server;

use mcpaxle::client::{Client, ClientOptions};
use mcpaxle::jsonrpc::Notification;
use mcpaxle::schema::{CallToolResult, SubscriptionFilter, Tool};
use mcpaxle::server::{BusOptions, RedisBus, Server, ServerOptions};
use mcpaxle::transport::http::{HttpOptions, HttpServer};
use redis_server::{Redis, free_port};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One instance: a server on the shared bus, served over HTTP.
async fn instance(name: &str, bus: Arc<RedisBus>) -> (Server, HttpServer, String) {
    let server = Server::builder(name, "1.0.0").enable_tools().enable_resources().bus(bus).build();
    let http = HttpServer::bind(server.clone(), "127.0.0.1:0".parse().unwrap(), HttpOptions::default()).await.unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    (server, http, url)
}

fn bus(url: &str, channel: &str) -> Arc<RedisBus> {
    RedisBus::new(BusOptions::redis(url).unwrap().with_channel(channel).unwrap())
}

async fn connected(bus: &RedisBus) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !bus.is_connected() {
        assert!(Instant::now() < deadline, "the bus did not connect to Redis within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn add_tool(server: &Server, name: &str) {
    server
        .add_tool(Tool::new(name, "t", json!({ "type": "object" })), |_a, _c| async { Ok(CallToolResult::text("ok")) })
        .unwrap();
}

async fn next(sub: &mut mcpaxle::client::Subscription) -> Notification {
    tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("a notification within 10 s")
        .expect("the stream is open")
        .unwrap()
}

async fn listen(url: &str, filter: SubscriptionFilter) -> (Client, mcpaxle::client::Subscription) {
    let client = Client::connect_http(url, ClientOptions::new("fleet-test", "1")).await.unwrap();
    let sub = client.subscribe(filter).await.unwrap();
    (client, sub)
}

fn tools_and(uri: &str) -> SubscriptionFilter {
    SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec![uri.to_owned()]),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_one_instance_reaches_the_listen_streams_of_another() {
    let redis = Redis::start(free_port());
    let (bus_a, bus_b) = (bus(&redis.url(), "fleet:cross"), bus(&redis.url(), "fleet:cross"));
    let (server_a, _http_a, url_a) = instance("a", bus_a.clone()).await;
    let (server_b, _http_b, url_b) = instance("b", bus_b.clone()).await;
    let (_ca, mut on_a) = listen(&url_a, tools_and("file:///shared")).await;
    let (_cb, mut on_b) = listen(&url_b, tools_and("file:///shared")).await;
    connected(&bus_a).await;
    connected(&bus_b).await;

    add_tool(&server_a, "made_on_a");
    assert_eq!(next(&mut on_b).await.method, "notifications/tools/list_changed");
    assert_eq!(next(&mut on_a).await.method, "notifications/tools/list_changed");
    server_b.notify_resource_updated("file:///shared");
    let n = next(&mut on_a).await;
    assert_eq!(n.method, "notifications/resources/updated");
    assert_eq!(n.params.as_ref().unwrap()["uri"], "file:///shared");
    assert_eq!(next(&mut on_b).await.method, "notifications/resources/updated");
    // Another fleet's channel on the same Redis hears nothing of this one.
    let bus_c = bus(&redis.url(), "fleet:other");
    let (_server_c, _http_c, url_c) = instance("c", bus_c.clone()).await;
    let (_cc, mut on_c) = listen(&url_c, tools_and("file:///shared")).await;
    connected(&bus_c).await;
    add_tool(&server_a, "made_on_a_again");
    assert_eq!(next(&mut on_b).await.method, "notifications/tools/list_changed");
    assert!(tokio::time::timeout(Duration::from_millis(500), on_c.next()).await.is_err(), "another channel heard it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_down_local_delivery_goes_on_and_listeners_are_told_when_it_is_back() {
    let port = free_port();
    // The server options name the bus, as every binding gives them.
    let options: ServerOptions = mcpaxle::options::from_json(
        "server options",
        json!({ "bus": { "url": format!("redis://127.0.0.1:{port}/0"), "channel": "fleet:down" } }),
    )
    .unwrap();
    let server_a = Server::builder("a", "1").options(options).enable_tools().build();
    let http_a =
        HttpServer::bind(server_a.clone(), "127.0.0.1:0".parse().unwrap(), HttpOptions::default()).await.unwrap();
    let bus_b = bus(&format!("redis://127.0.0.1:{port}/0"), "fleet:down");
    let (_server_b, _http_b, url_b) = instance("b", bus_b.clone()).await;
    let (_ca, mut on_a) = listen(&format!("http://{}/mcp", http_a.local_addr()), tools_and("x:")).await;
    let (_cb, mut on_b) = listen(&url_b, tools_and("x:")).await;

    // No Redis: the server serves and its own listeners hear its changes at once.
    add_tool(&server_a, "while_down");
    assert_eq!(next(&mut on_a).await.method, "notifications/tools/list_changed");
    assert!(!bus_b.is_connected());

    // Redis comes up: b's listeners may have missed a's change, and are told so.
    let redis = Redis::start(port);
    assert_eq!(next(&mut on_b).await.method, "notifications/tools/list_changed");
    connected(&bus_b).await;
    let n = next(&mut on_a).await;
    assert_eq!(n.method, "notifications/tools/list_changed", "a's listeners are told too");

    // Killed and restarted: the same again, and changes cross once it is back.
    drop(redis);
    let deadline = Instant::now() + Duration::from_secs(10);
    while bus_b.is_connected() {
        assert!(Instant::now() < deadline, "the bus did not notice that Redis went away");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    add_tool(&server_a, "while_down_again");
    assert_eq!(next(&mut on_a).await.method, "notifications/tools/list_changed");
    let _redis = Redis::start(port);
    assert_eq!(next(&mut on_b).await.method, "notifications/tools/list_changed");
    connected(&bus_b).await;
    // Both subscribed again (a's bus too: its listener heard the reconnection).
    assert_eq!(next(&mut on_a).await.method, "notifications/tools/list_changed");
    // What is still pending from the reconnections, then a fresh change.
    while tokio::time::timeout(Duration::from_millis(500), on_b.next()).await.is_ok() {}
    add_tool(&server_a, "after");
    assert_eq!(next(&mut on_b).await.method, "notifications/tools/list_changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_only_announces_reaches_the_others() {
    // Instance a serves no request and announces from a thread outside the runtime (as a
    // binding's host thread does): serving started its bus.
    let redis = Redis::start(free_port());
    let (bus_a, bus_b) = (bus(&redis.url(), "fleet:announcer"), bus(&redis.url(), "fleet:announcer"));
    let (server_a, _http_a, _url_a) = instance("a", bus_a.clone()).await;
    let (_server_b, _http_b, url_b) = instance("b", bus_b.clone()).await;
    let (_cb, mut on_b) = listen(&url_b, tools_and("x:")).await;
    connected(&bus_a).await;
    connected(&bus_b).await;
    std::thread::spawn(move || add_tool(&server_a, "from_a_host_thread")).join().unwrap();
    assert_eq!(next(&mut on_b).await.method, "notifications/tools/list_changed");
}
