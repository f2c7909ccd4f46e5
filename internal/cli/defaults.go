package cli

// DefaultURL is the askd server a command asks, and an installer writes,
// when given no URL: askd serve's default address.
const DefaultURL = "http://127.0.0.1:7777"
