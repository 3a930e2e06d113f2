// GET /v1/docs: an interactive reference (Scalar, loaded from a CDN at a pinned
// version) over GET /v1/openapi.json. Nothing of it is bundled into the worker.
export const SCALAR_VERSION = "1.72.1";

export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pet Store API v1 reference</title>
</head>
<body>
<div id="app"></div>
<script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference@${SCALAR_VERSION}"></script>
<script>Scalar.createApiReference("#app", { url: "/v1/openapi.json" });</script>
<noscript>The reference needs JavaScript; the raw document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
</body>
</html>
`;
