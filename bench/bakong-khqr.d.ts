// Types for the reference SDK (bakong-khqr 1.0.20, CommonJS, ships none), covering what the
// tests and the benchmark use. Node's ESM import of it gives module.exports as the default.
declare module "bakong-khqr" {
  export interface KHQRStatus {
    code: number;
    errorCode: number | null;
    message: string | null;
  }
  export interface KHQRResponse<T> {
    status: KHQRStatus;
    data: T;
  }
  export interface OptionalData {
    currency?: number;
    amount?: number | string;
    billNumber?: string;
    mobileNumber?: string;
    storeLabel?: string;
    terminalLabel?: string;
    purposeOfTransaction?: string;
    accountInformation?: string;
    acquiringBank?: string;
    languagePreference?: string;
    merchantNameAlternateLanguage?: string;
    merchantCityAlternateLanguage?: string;
    merchantCategoryCode?: string;
    upiMerchantAccount?: string;
    expirationTimestamp?: number;
  }
  export class IndividualInfo {
    constructor(bakongAccountID: string, merchantName: string, merchantCity: string, optional?: OptionalData);
  }
  export class MerchantInfo extends IndividualInfo {
    constructor(
      bakongAccountID: string,
      merchantName: string,
      merchantCity: string,
      merchantID: string,
      acquiringBank: string,
      optional?: OptionalData,
    );
  }
  /** All values are strings or null; keys as the SDK names them (bakongAccountID, pointofInitiationMethod, …). */
  export type SdkDecoded = Record<string, string | null>;
  export class BakongKHQR {
    generateIndividual(info: IndividualInfo): KHQRResponse<{ qr: string; md5: string } | null>;
    generateMerchant(info: MerchantInfo): KHQRResponse<{ qr: string; md5: string } | null>;
    static decode(qr: string): KHQRResponse<SdkDecoded>;
    static verify(qr: string): { isValid: boolean };
  }
  export const khqrData: {
    currency: { usd: 840; khr: 116 };
    merchantType: { merchant: "merchant"; individual: "individual" };
  };
  const sdk: {
    BakongKHQR: typeof BakongKHQR;
    IndividualInfo: typeof IndividualInfo;
    MerchantInfo: typeof MerchantInfo;
    khqrData: typeof khqrData;
  };
  export default sdk;
}
