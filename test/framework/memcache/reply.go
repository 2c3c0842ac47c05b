package memcache

// SetReply stores value under key, as Set does, and returns memcached's
// one-line answer as it came: STORED, or why not. A test that expects
// memcached to refuse an item (SERVER_ERROR object too large for cache,
// when the item is larger than --max-item-size) compares the refusal
// itself, not the text of Set's error. The error is for the connection
// only. After a refusal memcached still reads and discards the value, so
// the connection stays usable for the next request.
func (c *Client) SetReply(key string, value []byte) (string, error) {
	if err := c.send("set %s 0 0 %d\r\n", key, len(value)); err != nil {
		return "", err
	}
	// Two writes, so that a value of megabytes is not copied to add the
	// \r\n, and the caller's slice is never appended to.
	if _, err := c.conn.Write(value); err != nil {
		return "", err
	}
	if _, err := c.conn.Write([]byte("\r\n")); err != nil {
		return "", err
	}
	return c.line()
}
