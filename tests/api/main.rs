//! Black-box tests over real HTTP: one binary, one module per area, every app on the
//! sled engine (the data folder). `postgres_main.rs` runs the same modules on PostgreSQL.

/// The engine of every app this binary starts.
const ENGINE: helpers::Engine = helpers::Engine::Sled;

include!("suite.rs");

mod sled_engine;
