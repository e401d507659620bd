internal import CCurl

extension CurlOperation {
    /// Applies the settings every request shares: protocols, redirects, timeouts, TLS and the User-Agent.
    /// Proxies come from the environment (`http_proxy`, `https_proxy`, `no_proxy`), as libcurl reads them.
    func configure(_ configuration: HTTPClientConfiguration) throws {
        // Only HTTP(S), also after a redirect: a server must not send us to file:// or elsewhere.
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_FOLLOWLOCATION, 1)
        try set(CURLOPT_MAXREDIRS, configuration.maxRedirects)
        try set(CURLOPT_USERAGENT, configuration.userAgent)
        try set(CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout * 1000))
        try set(CURLOPT_LOW_SPEED_LIMIT, configuration.lowSpeedLimit)
        try set(CURLOPT_LOW_SPEED_TIME, configuration.lowSpeedTime)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        if let caFile = configuration.caFile {
            try set(CURLOPT_CAINFO, caFile)
        }
        if configuration.insecure {
            try set(CURLOPT_SSL_VERIFYPEER, 0)
            try set(CURLOPT_SSL_VERIFYHOST, 0)
        } else {
            try set(CURLOPT_SSL_VERIFYPEER, 1)
            try set(CURLOPT_SSL_VERIFYHOST, 2)
        }
    }
}
