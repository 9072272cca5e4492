//! The caps every path applies to what a server (or a user) sends: one place for each number, so
//! the transport never accepts what the result reader would refuse.

/// §9/§5.1: the one byte cap on a `tools/call` result, on every path (the transport's response
/// body, `interpretCall` bytes / text / objects, `builderInterpretCall`): 64 MiB, Builder's own
/// cap, which holds a 500 000-atom result (~31 MB of JSON for the liquid_box shape) with room for
/// the optional channels.
pub const MAX_RESULT_BYTES: usize = 64 * 1024 * 1024;

/// The default cap on one MCP response body, in bytes: [`MAX_RESULT_BYTES`], so a body the
/// transport accepts is never refused by the size check of the result it carries.
pub const MAX_RESPONSE_BYTES: u64 = MAX_RESULT_BYTES as u64;

/// §5.1: Builder accepts at most this many atoms per result.
pub const MAX_ATOMS: usize = 500_000;

/// Most bytes of an HTTP error answer's body kept (for its first line and a JSON-RPC error).
pub const MAX_ERROR_BODY: usize = 64 * 1024;
