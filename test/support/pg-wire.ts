// PostgreSQL wire messages written by hand, for tests that talk to the embedded database's front byte by byte.

/** A typed message: type byte, length (counting itself), body. */
export function pgFrame(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** A protocol 3.0 start-up packet for user and database `postgres`. */
export function pgStartup(): Buffer {
  const body = Buffer.from("user\0postgres\0database\0postgres\0\0");
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(196608, 4);
  return Buffer.concat([head, body]);
}

/** A PasswordMessage. */
export function pgPassword(password: string): Buffer {
  return pgFrame("p", Buffer.from(`${password}\0`));
}
