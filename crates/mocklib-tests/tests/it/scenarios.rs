//! Scenarios and keyed state (issue 40): a checkout flow whose answers
//! change with the state requests set, a state per order id, boundaries
//! that keep their states apart, and a test reading and setting states.

use mocklib::node::setup_server;
use mocklib::scenario::{self, Scenario};
use mocklib::{HttpResponse, http};

fn client(server: &mocklib::node::Server) -> reqwest_middleware::ClientWithMiddleware {
    reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(server.middleware())
        .build()
}

async fn text(
    client: &reqwest_middleware::ClientWithMiddleware,
    method: &str,
    url: &str,
) -> String {
    let method = ::http::Method::from_bytes(method.as_bytes()).unwrap();
    let response = client.request(method, url).send().await.unwrap();
    format!(
        "{} {}",
        response.status().as_u16(),
        response.text().await.unwrap()
    )
}

fn checkout() -> Vec<mocklib::Handler> {
    let cart = Scenario::new("checkout");
    vec![
        http::get("https://shop.example/cart", |_| HttpResponse::text("empty"))
            .when_state(&cart, Scenario::STARTED),
        http::post("https://shop.example/cart", |_| HttpResponse::text("added"))
            .when_state(&cart, Scenario::STARTED)
            .set_state(&cart, "filled"),
        http::get("https://shop.example/cart", |_| {
            HttpResponse::text("one book")
        })
        .when_state(&cart, "filled"),
        http::post("https://shop.example/pay", |_| HttpResponse::text("paid"))
            .when_state(&cart, "filled")
            .set_state(&cart, "paid")
            .times(1),
        http::get("https://shop.example/cart", |_| {
            HttpResponse::text("empty, paid")
        })
        .when_state(&cart, "paid"),
        // Paying outside "filled": no handler above matches, this one does.
        http::post("https://shop.example/pay", |_| {
            HttpResponse::text("nothing to pay").status(409)
        }),
    ]
}

#[tokio::test]
async fn a_checkout_flow_answers_by_the_state_its_requests_set() {
    let server = setup_server(checkout());
    server.listen();
    let client = client(&server);
    let shop = "https://shop.example";
    assert_eq!(
        text(&client, "POST", &format!("{shop}/pay")).await,
        "409 nothing to pay"
    );
    assert_eq!(
        text(&client, "GET", &format!("{shop}/cart")).await,
        "200 empty"
    );
    assert_eq!(
        text(&client, "POST", &format!("{shop}/cart")).await,
        "200 added"
    );
    assert_eq!(
        text(&client, "GET", &format!("{shop}/cart")).await,
        "200 one book"
    );
    assert_eq!(
        text(&client, "POST", &format!("{shop}/pay")).await,
        "200 paid"
    );
    assert_eq!(
        text(&client, "GET", &format!("{shop}/cart")).await,
        "200 empty, paid"
    );
    assert_eq!(
        text(&client, "POST", &format!("{shop}/pay")).await,
        "409 nothing to pay"
    );
    // The handler out of its state did not count: paid once, as expected.
    server.verify().unwrap();
    let state = server.scope_local(scenario::states(), |states| {
        states.get("checkout", "").to_owned()
    });
    assert_eq!(state, "paid");
    // A test sets the state itself, and restore_handlers starts it over.
    server.scope_local(scenario::states(), |states| {
        states.set("checkout", "", "filled")
    });
    assert_eq!(
        text(&client, "GET", &format!("{shop}/cart")).await,
        "200 one book"
    );
    server.restore_handlers();
    assert_eq!(
        text(&client, "GET", &format!("{shop}/cart")).await,
        "200 empty"
    );
}

#[tokio::test]
async fn a_keyed_scenario_keeps_a_state_per_key_and_a_boundary_its_own() {
    let order = Scenario::new("order")
        .keyed_by(|request| request.url().path_segments()?.nth(1).map(str::to_owned));
    let server = setup_server([
        http::get("https://shop.example/orders/:id", |_| {
            HttpResponse::text("open")
        })
        .when_state(&order, Scenario::STARTED),
        http::get("https://shop.example/orders/:id", |_| {
            HttpResponse::text("shipped")
        })
        .when_state(&order, "shipped"),
        http::post("https://shop.example/orders/:id/ship", |_| {
            HttpResponse::empty().status(204)
        })
        .set_state(&order, "shipped"),
    ]);
    server.listen();
    let client = client(&server);
    let get = |id: u32| {
        let client = client.clone();
        async move { text(&client, "GET", &format!("https://shop.example/orders/{id}")).await }
    };
    assert_eq!(
        text(&client, "POST", "https://shop.example/orders/1/ship").await,
        "204 "
    );
    assert_eq!(get(1).await, "200 shipped");
    assert_eq!(get(2).await, "200 open");

    // A boundary starts from the server's states; what it changes stays in it.
    let inside = server.boundary({
        let client = client.clone();
        move || {
            let client = client.clone();
            async move {
                text(&client, "POST", "https://shop.example/orders/2/ship").await;
                let two = text(&client, "GET", "https://shop.example/orders/2").await;
                let one = text(&client, "GET", "https://shop.example/orders/1").await;
                [two, one]
            }
        }
    });
    assert_eq!(inside().await, ["200 shipped", "200 shipped"]);
    assert_eq!(get(2).await, "200 open");
    let states: Vec<(String, String, String)> = server.scope_local(scenario::states(), |states| {
        states
            .iter()
            .map(|(s, k, v)| (s.to_owned(), k.to_owned(), v.to_owned()))
            .collect()
    });
    assert_eq!(states, [("order".into(), "1".into(), "shipped".into())]);
}
