// workerd's addition to Web Crypto, which src/auth/ uses. The Node programs (the scripts,
// these tests) type-check those files when they import the document builder
// (src/openapi/document.ts, through the operations' stages); workerd runs them.
interface SubtleCrypto {
  timingSafeEqual(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean;
}
