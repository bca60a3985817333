import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { AppError, type ErrorCode } from '../../core/errors.js';

export type Language = 'en' | 'es';

/**
 * Interface B failure messages (C12): each condition has its status (through the error catalogue)
 * and its text in English and Spanish.
 */
const CONDITIONS = {
  missing_api_key: {
    code: 'unauthenticated',
    en: 'Invalid request: the api_key parameter is required.',
    es: 'Solicitud no válida: el parámetro api_key es obligatorio.',
  },
  invalid_api_key: {
    code: 'unauthenticated',
    en: 'Invalid request: the API key is not valid.',
    es: 'Solicitud no válida: la clave de API no es válida.',
  },
  invalid_item_id: {
    code: 'validation',
    en: 'Invalid request: item_id must be a positive integer.',
    es: 'Solicitud no válida: item_id debe ser un número entero positivo.',
  },
  missing_purchase_code: {
    code: 'validation',
    en: 'Invalid request: the purchase_code parameter is required.',
    es: 'Solicitud no válida: el parámetro purchase_code es obligatorio.',
  },
  malformed_purchase_code: {
    code: 'validation',
    en: 'Invalid request: purchase_code must be text of at most 200 characters, without NUL characters.',
    es: 'Solicitud no válida: purchase_code debe ser un texto de hasta 200 caracteres, sin caracteres NUL.',
  },
  no_items_found: { code: 'not_found', en: 'No items found.', es: 'No se encontraron artículos.' },
  item_not_found: { code: 'not_found', en: 'Item not found.', es: 'Artículo no encontrado.' },
  invalid_purchase_code: { code: 'not_found', en: 'Invalid purchase code.', es: 'Código de compra no válido.' },
  rate_limited: {
    code: 'rate_limited',
    en: 'Too many validation attempts. Please try again later.',
    es: 'Demasiados intentos de validación. Inténtelo de nuevo más tarde.',
  },
  malformed_body: {
    code: 'bad_request',
    en: 'The request body could not be read. Send JSON or a form body.',
    es: 'No se pudo leer el cuerpo de la solicitud. Envíe JSON o un formulario.',
  },
  body_too_large: {
    code: 'payload_too_large',
    en: 'The request body is too large.',
    es: 'El cuerpo de la solicitud es demasiado grande.',
  },
  route_not_found: {
    code: 'route_not_found',
    en: 'The requested endpoint does not exist.',
    es: 'El recurso solicitado no existe.',
  },
  method_not_allowed: {
    code: 'method_not_allowed',
    en: 'This method is not allowed here: the Allow header names the ones that are.',
    es: 'Este método no está permitido aquí: la cabecera Allow indica los permitidos.',
  },
  unexpected: {
    code: 'internal',
    en: 'Something went wrong. Please try again later.',
    es: 'Algo salió mal. Inténtelo de nuevo más tarde.',
  },
  unavailable: {
    code: 'unavailable',
    en: 'The service is temporarily unavailable. Please try again shortly.',
    es: 'El servicio no está disponible temporalmente. Inténtelo de nuevo en breve.',
  },
} as const satisfies Record<string, { code: ErrorCode; en: string; es: string }>;

export type Condition = keyof typeof CONDITIONS;

/** `Accept-Language` whose first choice is Spanish (`es`, `es-MX`, …) → Spanish; anything else → English. */
export function language(c: Context<AppEnv>): Language {
  const first = (c.req.header('accept-language') ?? '').split(',')[0]!.trim().toLowerCase();
  return /^es(?:-|;|$)/.test(first) ? 'es' : 'en';
}

export function message(condition: Condition, lang: Language): string {
  return CONDITIONS[condition][lang];
}

/** An AppError carrying the condition's message in the caller's language. */
export function licenseError(c: Context<AppEnv>, condition: Condition, headers: Record<string, string> = {}): AppError {
  return new AppError(CONDITIONS[condition].code, message(condition, language(c)), headers);
}

/** Failures raised by shared layers (body reading, limits) that Interface B re-words in the caller's language. */
const SHARED_FAILURES: Partial<Record<ErrorCode, Condition>> = {
  bad_request: 'malformed_body',
  unsupported_media_type: 'malformed_body',
  payload_too_large: 'body_too_large',
  route_not_found: 'route_not_found',
  internal: 'unexpected',
  unavailable: 'unavailable',
};

/**
 * An Interface B failure in the caller's language (C12): one of a shared layer (an unreadable body, the body limit that
 * runs before any route, an unexpected error) re-worded; any other as it is.
 */
export function inCallersLanguage(c: Context<AppEnv>, failure: AppError): AppError {
  const condition = SHARED_FAILURES[failure.code];
  return condition ? licenseError(c, condition, failure.headers) : failure;
}
